// A control-plane policy source's sync health: the status it reports, the success and failure metrics, each
// failure's log line, and the delay before the next try (the backoff, or a longer Retry-After the control plane asked for).
import type { Logger } from "../log.js";
import type { Backoff } from "./backoff.js";
import type { SyncStatus } from "./http-source-options.js";
import { SyncError } from "./kuma-client.js";
import type { PolicySourceMetrics } from "./metrics.js";

export class SyncHealth {
  private lastRetryAfterMs: number | undefined;

  constructor(
    private readonly status: SyncStatus,
    private readonly metrics: PolicySourceMetrics,
    private readonly backoff: Backoff,
    private readonly log: Logger,
  ) {}

  /** A sync (or a long-poll round the control plane held) succeeded: the backoff starts again. */
  success(): void {
    this.backoff.reset();
    this.status.lastSuccessMs = Date.now();
    this.status.lastError = undefined;
    this.metrics.lastSuccess.set(this.status.lastSuccessMs / 1000);
  }

  /** A sync failed: counted by reason and logged; refused credentials halt the source (the last good set stays). */
  failure(err: unknown): void {
    const e = err instanceof SyncError ? err : new SyncError("network", (err as Error).message);
    this.metrics.errors.inc({ reason: e.reason });
    this.status.lastError = { reason: e.reason, message: e.message };
    this.lastRetryAfterMs = e.retryAfterMs;
    if (e.fatal) {
      this.status.halted = true;
      this.log.error({ reason: e.reason, err: e.message }, "control plane refused our credentials: policy sync stopped, the last good set stays in force");
    } else {
      this.log.warn({ reason: e.reason, err: e.message, attempt: this.backoff.attempts + 1 }, "policy sync failed; keeping the last good set and retrying");
    }
  }

  /** How long to wait before the next try: the next backoff step, or the last failure's Retry-After when longer. */
  retryDelay(): number {
    const delay = Math.max(this.backoff.next(), this.lastRetryAfterMs ?? 0);
    this.lastRetryAfterMs = undefined;
    return delay;
  }
}
