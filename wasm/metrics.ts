// The filter's metrics: defined once per VM (in proxy_on_vm_start, never during _initialize) and
// updated through abi/host.ts. Names come from contract.ts; failures are logged, never fatal.
import { defineMetric, incrementMetric, recordMetric } from "./abi/host";
import { LogLevel, MetricType } from "./abi/types";
import { Writer } from "./abi/writer";
import * as contract from "./contract";
import { DrainState } from "./drain";
import { E_METRIC_DEFINE } from "./errors";
import { emit, startLine } from "./logging";

/** Poll failure reasons (the `reason` label: contract.POLL_ERROR_*). */
export const enum PollError { Dispatch, Reset, Status, Malformed }

const NAME_BYTES = 128;
const NAME = new Writer(memory.data(NAME_BYTES), NAME_BYTES);

/** Metric id, or -1 when undefined (the host refused it; updates are then skipped). */
function define(metricType: u32, name: Writer): i64 {
  const id = defineMetric(metricType, name);
  if (id < 0) emit(LogLevel.Warn, startLine(E_METRIC_DEFINE).bytes(name.base, name.length));
  return id;
}

function named(name: string): Writer {
  return NAME.reset().text(name);
}

/** meshext_drain_poll_errors_total_reason=<reason> */
function pollErrors(reason: string): i64 {
  return define(MetricType.Counter, named(contract.METRIC_POLL_ERRORS).text(contract.METRIC_REASON_LABEL).text(reason));
}

function increment(id: i64): void {
  if (id >= 0) incrementMetric(<u32>id, 1);
}

function record(id: i64, value: i64): void {
  if (id >= 0) recordMetric(<u32>id, value);
}

export class DrainMetrics {
  draining: i64 = -1;
  startedSeconds: i64 = -1;
  deadlineSeconds: i64 = -1;
  closeResponses: i64 = -1;
  healthRefusals: i64 = -1;
  pollSuccesses: i64 = -1;
  /** Indexed by PollError. */
  pollErrors: StaticArray<i64> = [-1, -1, -1, -1];

  /** Define everything and write the gauges (0) so they show up under /stats?usedonly. */
  defineAll(): void {
    this.draining = define(MetricType.Gauge, named(contract.METRIC_DRAINING));
    this.startedSeconds = define(MetricType.Gauge, named(contract.METRIC_STARTED_SECONDS));
    this.deadlineSeconds = define(MetricType.Gauge, named(contract.METRIC_DEADLINE_SECONDS));
    this.closeResponses = define(MetricType.Counter, named(contract.METRIC_CLOSE_RESPONSES));
    this.healthRefusals = define(MetricType.Counter, named(contract.METRIC_HEALTH_REFUSALS));
    this.pollSuccesses = define(MetricType.Counter, named(contract.METRIC_POLL_SUCCESSES));
    const errors = this.pollErrors;
    unchecked(errors[PollError.Dispatch] = pollErrors(contract.POLL_ERROR_DISPATCH));
    unchecked(errors[PollError.Reset] = pollErrors(contract.POLL_ERROR_RESET));
    unchecked(errors[PollError.Status] = pollErrors(contract.POLL_ERROR_STATUS));
    unchecked(errors[PollError.Malformed] = pollErrors(contract.POLL_ERROR_MALFORMED));
    this.recordState(new DrainState());
  }

  /** Gauges are "last writer wins" across VMs, which is right for values every VM agrees on. */
  recordState(state: DrainState): void {
    record(this.draining, state.draining ? 1 : 0);
    record(this.startedSeconds, state.draining ? state.sinceMs / 1000 : 0);
    record(this.deadlineSeconds, state.draining ? state.deadlineMs / 1000 : 0);
  }

  closedResponse(): void { increment(this.closeResponses); }
  healthRefused(): void { increment(this.healthRefusals); }
  pollSucceeded(): void { increment(this.pollSuccesses); }
  pollFailed(reason: PollError): void { increment(unchecked(this.pollErrors[reason])); }
}
