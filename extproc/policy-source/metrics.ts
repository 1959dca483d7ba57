// Metrics of the control-plane policy source, registered on the registry it is given (never the global one).
import { Counter, Gauge, type Registry } from "prom-client";
import { POLICY_TYPES } from "../kuma-rest/resources.js";

/** Closed set of sync failure reasons (the `reason` label). */
export const SYNC_ERROR_REASONS = ["network", "timeout", "server_error", "rate_limited", "unauthorized", "forbidden", "client_error", "bad_response"] as const;
export type SyncErrorReason = (typeof SYNC_ERROR_REASONS)[number];

export class PolicySourceMetrics {
  readonly lastSuccess: Gauge;
  readonly attempts: Counter;
  readonly errors: Counter<"reason">;
  readonly inForce: Gauge<"kind">;
  readonly rejected: Gauge;
  readonly rejectedTotal: Counter;
  readonly watchPaced: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.lastSuccess = new Gauge({ name: "meshext_control_plane_last_sync_success_timestamp_seconds", help: "Unix time of the last successful policy sync from the control plane.", registers });
    this.attempts = new Counter({ name: "meshext_control_plane_sync_attempts_total", help: "Policy sync attempts against the control plane (full lists and long-polls).", registers });
    this.errors = new Counter({ name: "meshext_control_plane_sync_errors_total", help: "Failed policy sync attempts, by reason.", labelNames: ["reason"], registers });
    // Every reason is exported from the start (at 0), so rates and alerts see the series before the first error.
    for (const reason of SYNC_ERROR_REASONS) this.errors.inc({ reason }, 0);
    this.inForce = new Gauge({ name: "meshext_control_plane_policies", help: "Policies in force from the control plane, by kind.", labelNames: ["kind"], registers });
    this.rejected = new Gauge({ name: "meshext_control_plane_rejected_policies", help: "Policies in the current control-plane set that failed validation and are not applied.", registers });
    this.watchPaced = new Counter({ name: "meshext_control_plane_watch_paced_total", help: "Long-poll rounds held back because the control plane answered the previous ones at once (304 or a new ETag without waiting).", registers });
    this.rejectedTotal = new Counter({ name: "meshext_control_plane_rejected_policies_total", help: "Policies rejected by validation, counted each time a changed set is applied.", registers });
  }

  /** A set was applied: every kind's gauge (each kind is set every time: nothing else to clear) and the rejected counts. */
  applied(policies: ReadonlyArray<{ type: string }>, rejected: number): void {
    const byKind = new Map<string, number>();
    for (let i = 0; i < policies.length; i++) byKind.set(policies[i]!.type, (byKind.get(policies[i]!.type) ?? 0) + 1);
    for (const t of POLICY_TYPES) this.inForce.set({ kind: t.kind }, byKind.get(t.kind) ?? 0);
    this.rejected.set(rejected);
    this.rejectedTotal.inc(rejected);
  }
}
