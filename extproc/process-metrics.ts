// prom-client's default process and event-loop metrics under the meshext_ prefix (or another), minus the
// three gauges it names with a "_total" suffix (promtool rejects those; the same counts stay
// available, by type, as meshext_nodejs_active_{handles,requests,resources}).
import { collectDefaultMetrics, Counter, Gauge, type Registry } from "prom-client";
import { logWriteErrors } from "./log.js";
import { MESHEXT_VERSION } from "./version.js";

export const METRIC_PREFIX = "meshext_";

/**
 * How often the event-loop delay is sampled for meshext_nodejs_eventloop_lag_*. prom-client's default, 10 ms, is a
 * timer waking the process 100 times a second: about 0.8 % of a core on an idle sidecar. Every 100 ms costs a tenth
 * of that and still gives 150 samples between two 15 s scrapes.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

const MISNAMED_GAUGES = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

export function collectProcessMetrics(registry: Registry, prefix = METRIC_PREFIX): void {
  collectDefaultMetrics({ register: registry, prefix, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  for (const name of MISNAMED_GAUGES) registry.removeSingleMetric(prefix + name);
  new Counter({
    name: `${prefix}log_write_errors_total`,
    help: "Process-log writes that failed (stdout closed or broken: its reader went away); those lines are lost, the process carries on.",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(logWriteErrors.count);
    },
  });
  // The release and runtime as labels of a constant 1 (what `meshext --version` prints), for joins and fleet views.
  const buildInfo = new Gauge({ name: `${prefix}build_info`, help: "The meshext release and Node.js version of this process (value 1).", labelNames: ["version", "nodejs_version"], registers: [registry] });
  buildInfo.set({ version: MESHEXT_VERSION, nodejs_version: process.version }, 1);
}
