// What the control-plane policy source is built from (HttpPolicySourceOptions) and reports (SyncStatus).
import type { Registry } from "prom-client";
import type { Logger } from "../log.js";
import type { KumaVersion } from "../policy/model/kuma-version.js";
import type { Backoff } from "./backoff.js";
import type { ApplyPolicies } from "./source.js";
import type { Dataplane } from "../policy/model/dataplane.js";

export interface HttpPolicySourceOptions {
  /** Control plane REST API, e.g. http://127.0.0.1:5681 */
  baseUrl: string;
  /** Bearer token sent on every request; empty for none. */
  token?: string;
  mesh: string;
  /** Plain polling interval (jitter ±20% added); also the pause between long-polls' re-syncs. @default 5000 */
  pollIntervalMs: number;
  /** How long one long-poll is held by the server. @default 30000 */
  longPollWaitMs?: number;
  /** Last good set on disk; empty disables it. */
  cacheFile?: string;
  /** @default 10000 */
  requestTimeoutMs?: number;
  /** Most bytes read by one sync (every kind's list, all pages together). */
  maxListBytes: number;
  apply: ApplyPolicies;
  /** Whose validation rules decide which policies load. @default the engine default (2.14) */
  kumaVersion?: KumaVersion;
  /** This sidecar's Dataplane; when given, the control plane's per-dataplane set is read if it offers one. */
  dataplane?: () => Dataplane;
  /** The Dataplane resource this sidecar registers, when it registers one (see PolicySetReaderOptions.registered). */
  registered?: () => Record<string, unknown>;
  log: Logger;
  registry: Registry;
  backoff?: Backoff;
}

/** Outcome of the last sync, for status endpoints and tests. */
export interface SyncStatus {
  lastSuccessMs?: number;
  lastError?: { reason: string; message: string };
  /** True after 401/403: the source stopped and needs a restart with other credentials. */
  halted: boolean;
  mode: "long-poll" | "poll";
}
