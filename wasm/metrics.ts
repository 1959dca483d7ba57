// The filter's metrics: defined once per VM (in proxy_on_vm_start, never during _initialize) and
// updated through abi/host.ts. Names come from contract.ts; failures are logged, never fatal.
// Metrics belong to the VM (Envoy returns the same id for the same name), so their ids live in a
// static table indexed by Metric rather than in an object.
import { defineMetric, incrementMetric, recordMetric } from "./abi/host";
import { LogLevel, MetricType } from "./abi/types";
import { Writer } from "./abi/writer";
import * as contract from "./contract";
import { DrainState } from "./drain";
import { E_METRIC_DEFINE } from "./errors";
import { emit, startLine } from "./logging";

/** Index into IDS. The poll errors are in the order of their `reason` (contract.POLL_ERROR_*). */
export const enum Metric {
  Draining, StartedSeconds, DeadlineSeconds, CloseResponses, HealthRefusals, PollSuccesses,
  PollErrorDispatch, PollErrorReset, PollErrorStatus, PollErrorMalformed,
}

/** Metric ids; -1 while undefined (the host refused it), so updates are skipped. */
const IDS: usize = memory.data<i32>([-1, -1, -1, -1, -1, -1, -1, -1, -1, -1]);

const NAME_BYTES = 128;
const NAME = new Writer(memory.data(NAME_BYTES), NAME_BYTES);

function define(metric: Metric, metricType: u32, name: Writer): void {
  const id = defineMetric(metricType, name);
  if (id < 0) emit(LogLevel.Warn, startLine(E_METRIC_DEFINE).bytes(name.base, name.length));
  store<i32>(IDS + (<usize>metric << 2), <i32>id);
}

function named(name: string): Writer {
  return NAME.reset().text(name);
}

/** meshext_drain_poll_errors_total_reason=<reason> */
function definePollErrors(metric: Metric, reason: string): void {
  define(metric, MetricType.Counter, named(contract.METRIC_POLL_ERRORS).text(contract.METRIC_REASON_LABEL).text(reason));
}

function idOf(metric: Metric): i32 {
  return load<i32>(IDS + (<usize>metric << 2));
}

export function increment(metric: Metric): void {
  const id = idOf(metric);
  if (id >= 0) incrementMetric(<u32>id, 1);
}

// Responses asked to close are counted in the VM and handed to the host once per tick (or every
// CLOSE_FLUSH_EVERY responses): the draining path then makes no host call for its counter.
const CLOSE_FLUSH_EVERY: i64 = 64;
let pendingCloses: i64 = 0;

export function countClose(): void {
  if (++pendingCloses >= CLOSE_FLUSH_EVERY) flushCounts();
}

/** Hands the counted closes to the host (root tick; the counter lags by at most one tick period). */
export function flushCounts(): void {
  if (pendingCloses == 0) return;
  const id = idOf(Metric.CloseResponses);
  if (id >= 0) incrementMetric(<u32>id, pendingCloses);
  pendingCloses = 0;
}

function record(metric: Metric, value: i64): void {
  const id = idOf(metric);
  if (id >= 0) recordMetric(<u32>id, value);
}

/** Define everything and write the gauges (0) so they show up under /stats?usedonly. */
export function defineMetrics(): void {
  define(Metric.Draining, MetricType.Gauge, named(contract.METRIC_DRAINING));
  define(Metric.StartedSeconds, MetricType.Gauge, named(contract.METRIC_STARTED_SECONDS));
  define(Metric.DeadlineSeconds, MetricType.Gauge, named(contract.METRIC_DEADLINE_SECONDS));
  define(Metric.CloseResponses, MetricType.Counter, named(contract.METRIC_CLOSE_RESPONSES));
  define(Metric.HealthRefusals, MetricType.Counter, named(contract.METRIC_HEALTH_REFUSALS));
  define(Metric.PollSuccesses, MetricType.Counter, named(contract.METRIC_POLL_SUCCESSES));
  definePollErrors(Metric.PollErrorDispatch, contract.POLL_ERROR_DISPATCH);
  definePollErrors(Metric.PollErrorReset, contract.POLL_ERROR_RESET);
  definePollErrors(Metric.PollErrorStatus, contract.POLL_ERROR_STATUS);
  definePollErrors(Metric.PollErrorMalformed, contract.POLL_ERROR_MALFORMED);
  recordState(new DrainState());
}

/** Gauges are "last writer wins" across VMs, which is right for values every VM agrees on. */
export function recordState(state: DrainState): void {
  record(Metric.Draining, state.draining ? 1 : 0);
  record(Metric.StartedSeconds, state.draining ? state.sinceMs / 1000 : 0);
  record(Metric.DeadlineSeconds, state.draining ? state.deadlineMs / 1000 : 0);
}
