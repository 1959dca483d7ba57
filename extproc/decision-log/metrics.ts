// Prometheus metrics of the decision log (meshext_decision_log_*), on the Registry passed in.
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
