// The filter's metrics: defined once per VM (in proxy_on_vm_start, never during _initialize) and
// updated through abi/host.ts. Names come from contract.ts; failures are logged, never fatal.
import { defineMetric, incrementMetric, recordMetric } from "./abi/host";
import { logAt } from "./logging";
import { LogLevel, MetricType } from "./abi/types";
import * as contract from "./contract";
import { DrainState } from "./drain";
import { E_METRIC_DEFINE } from "./errors";

const UNDEFINED: i64 = -1;

function define(metricType: u32, name: string): i64 {
  const id = defineMetric(metricType, name);
  if (id < 0) logAt(LogLevel.Warn, E_METRIC_DEFINE + name);
  return id;
}

function increment(id: i64): void {
  if (id >= 0) incrementMetric(<u32>id, 1);
}

function record(id: i64, value: i64): void {
  if (id >= 0) recordMetric(<u32>id, value);
}

function pollErrorName(reason: string): string {
  return contract.METRIC_POLL_ERRORS + contract.METRIC_REASON_LABEL + reason;
}

export class DrainMetrics {
  draining: i64 = UNDEFINED;
  startedSeconds: i64 = UNDEFINED;
  deadlineSeconds: i64 = UNDEFINED;
  closeResponses: i64 = UNDEFINED;
  healthRefusals: i64 = UNDEFINED;
  pollSuccesses: i64 = UNDEFINED;
  pollDispatchErrors: i64 = UNDEFINED;
  pollResetErrors: i64 = UNDEFINED;
  pollStatusErrors: i64 = UNDEFINED;
  pollMalformedErrors: i64 = UNDEFINED;

  /** Define everything and write the gauges (0) so they show up under /stats?usedonly. */
  defineAll(): void {
    this.draining = define(MetricType.Gauge, contract.METRIC_DRAINING);
    this.startedSeconds = define(MetricType.Gauge, contract.METRIC_STARTED_SECONDS);
    this.deadlineSeconds = define(MetricType.Gauge, contract.METRIC_DEADLINE_SECONDS);
    this.closeResponses = define(MetricType.Counter, contract.METRIC_CLOSE_RESPONSES);
    this.healthRefusals = define(MetricType.Counter, contract.METRIC_HEALTH_REFUSALS);
    this.pollSuccesses = define(MetricType.Counter, contract.METRIC_POLL_SUCCESSES);
    this.pollDispatchErrors = define(MetricType.Counter, pollErrorName(contract.POLL_ERROR_DISPATCH));
    this.pollResetErrors = define(MetricType.Counter, pollErrorName(contract.POLL_ERROR_RESET));
    this.pollStatusErrors = define(MetricType.Counter, pollErrorName(contract.POLL_ERROR_STATUS));
    this.pollMalformedErrors = define(MetricType.Counter, pollErrorName(contract.POLL_ERROR_MALFORMED));
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

  pollFailed(reason: string): void {
    if (reason == contract.POLL_ERROR_DISPATCH) increment(this.pollDispatchErrors);
    else if (reason == contract.POLL_ERROR_RESET) increment(this.pollResetErrors);
    else if (reason == contract.POLL_ERROR_STATUS) increment(this.pollStatusErrors);
    else increment(this.pollMalformedErrors);
  }
}
