// Prometheus metrics of the decision log and its push to the control plane (meshext_decision_log_*), on the Registry passed in.
import { Counter, type Registry } from "prom-client";

export type DropReason = "buffer_full" | "write_error" | "format_error";

export class DecisionLogMetrics {
  readonly lines: Counter;
  readonly dropped: Counter<"reason">;
  readonly rotations: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.lines = new Counter({ name: "meshext_decision_log_lines_total", help: "Decision-log lines written.", registers });
    this.dropped = new Counter({ name: "meshext_decision_log_dropped_total", help: "Decision-log lines dropped rather than block the request path, by reason (buffer_full: the writer fell behind; write_error; format_error).", labelNames: ["reason"], registers });
    for (const reason of ["buffer_full", "write_error", "format_error"] satisfies DropReason[]) this.dropped.inc({ reason }, 0);
    this.rotations = new Counter({ name: "meshext_decision_log_rotations_total", help: "Decision-log file rotations (size limit reached).", registers });
  }
}

export type PushDropReason = "sampled_out" | "too_large" | "refused" | "send_error";

/** Metrics of --decision-log-push (registered only when it is on). */
export class PushMetrics {
  readonly pushed: Counter;
  readonly dropped: Counter<"reason">;

  constructor(registry: Registry) {
    const registers = [registry];
    this.pushed = new Counter({ name: "meshext_decision_log_pushed_total", help: "Decision records the control plane accepted (--decision-log-push).", registers });
    this.dropped = new Counter({ name: "meshext_decision_log_push_dropped_total", help: "Decision records not pushed, by reason (sampled_out: past --decision-log-push-max-records in an interval; too_large: one record over --decision-log-push-batch-bytes; refused: the control plane answered 4xx; send_error: no answer, or 5xx).", labelNames: ["reason"], registers });
    for (const reason of ["sampled_out", "too_large", "refused", "send_error"] satisfies PushDropReason[]) this.dropped.inc({ reason }, 0);
  }
}
