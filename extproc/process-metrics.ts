// prom-client's default process and event-loop metrics under the meshext_ prefix (or another), minus the
// three gauges it names with a "_total" suffix (promtool rejects those; the same counts stay
// available, by type, as meshext_nodejs_active_{handles,requests,resources}).
import { collectDefaultMetrics, type Registry } from "prom-client";

export const METRIC_PREFIX = "meshext_";

const MISNAMED_GAUGES = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

export function collectProcessMetrics(registry: Registry, prefix = METRIC_PREFIX): void {
  collectDefaultMetrics({ register: registry, prefix });
  for (const name of MISNAMED_GAUGES) registry.removeSingleMetric(prefix + name);
}
