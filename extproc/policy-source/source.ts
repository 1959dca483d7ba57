// The contract every policy source (directory, control plane) implements: fetch or watch policies and hand
// complete, validated sets to `apply`. Sources never evaluate requests and never throw at callers.
import type { MeshResources } from "../policy/documents/resources.js";
import type { Policy, RejectedPolicy } from "../policy/model/types.js";

export type { RejectedPolicy };

/**
  * Receives the whole current policy set of a source, with the Mesh and service resources it holds (none when
  * the source has no such resources); `origin` names the source for logs (e.g. "dir:/etc/p"). A source that
  * already dropped policies which cannot select this dataplane says how many it had in `total`.
  */
export type ApplyPolicies = (policies: Policy[], origin: string, resources?: MeshResources, total?: number) => void;

export interface PolicySource {
  /** Starts loading; resolves after the first load attempt (successful or not). */
  start(): Promise<void>;
  /** Stops watching/polling; idempotent. */
  stop(): Promise<void>;
  /** Loads the whole set again and applies it even if unchanged (the dataplane it is selected for changed). */
  resync(): Promise<void>;
  /** True once a policy set has been applied at least once. */
  readonly loaded: boolean;
  /** The documents of the current set that failed validation (shown by /explain). */
  readonly rejected: readonly RejectedPolicy[];
}

