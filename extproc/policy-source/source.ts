// The contract every policy source (directory, control plane) implements: fetch or watch policies and hand
// complete, validated sets to `apply`. Sources never evaluate requests and never throw at callers.
import type { Policy } from "../policy/types.js";

/** The non-policy resources of the mesh that a source knows, as served (Kuma's universal JSON), each validated. */
export interface MeshResources {
  /** The `Mesh` resource (mTLS state); absent when the source has none. */
  mesh?: Record<string, unknown>;
  /** MeshService, MeshExternalService and MeshMultiZoneService resources. */
  services: Array<Record<string, unknown> & { type: string; name: string }>;
}

/**
 * Receives the whole current policy set of a source; `origin` names the source for logs (e.g. "dir:/etc/p").
 * `resources` is set by sources that read the mesh's Mesh and service resources (the control-plane source).
 */
export type ApplyPolicies = (policies: Policy[], origin: string, resources?: MeshResources) => void;

export interface PolicySource {
  /** Starts loading; resolves after the first load attempt (successful or not). */
  start(): Promise<void>;
  /** Stops watching/polling; idempotent. */
  stop(): Promise<void>;
  /** True once a policy set has been applied at least once. */
  readonly loaded: boolean;
}
