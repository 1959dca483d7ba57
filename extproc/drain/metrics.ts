// Prometheus metrics of the drain (meshext_sidecar_*; the wasm filter owns meshext_drain_* on Envoy's side), registered on the Registry passed in; values are
// read from the controller's snapshot at scrape time, plus a counter of failed Envoy admin calls.
import { Counter, Gauge, type Registry } from "prom-client";
import type { DrainSnapshot } from "./controller.js";
import type { EnvoyAdminCall } from "./envoy-admin.js";

export const DRAIN_METRIC = {
  draining: "meshext_sidecar_draining",
  durationSeconds: "meshext_sidecar_drain_duration_seconds",
  deadlineTimestampSeconds: "meshext_sidecar_drain_deadline_timestamp_seconds",
  inflightAtExit: "meshext_sidecar_drain_inflight_requests_at_exit",
  drainingForever: "meshext_sidecar_draining_forever",
  envoyAdminFailures: "meshext_sidecar_envoy_admin_failures_total",
} as const;

export const LABEL_CALL = "call";

export interface DrainMetrics {
  envoyAdminFailure(call: EnvoyAdminCall): void;
}

export function registerDrainMetrics(registry: Registry, snapshot: () => DrainSnapshot, nowMs: () => number = Date.now): DrainMetrics {
  new Gauge({
    name: DRAIN_METRIC.draining,
    help: "1 while the sidecar drains (from the first signal or POST /drain until exit), else 0.",
    registers: [registry],
    collect() {
      this.set(snapshot().phase === "serving" ? 0 : 1);
    },
  });
  new Gauge({
    name: DRAIN_METRIC.drainingForever,
    help: "1 while the sidecar drains forever (SIGUSR2 or the native sidecar's preStop; it ends on SIGTERM), else 0.",
    registers: [registry],
    collect() {
      const s = snapshot();
      this.set(s.mode === "forever" && s.phase !== "serving" ? 1 : 0);
    },
  });
  new Gauge({
    name: DRAIN_METRIC.durationSeconds,
    help: "Seconds spent draining so far, or until the drain completed.",
    registers: [registry],
    collect() {
      const s = snapshot();
      this.set(s.sinceMs === undefined ? 0 : ((s.drainedAtMs ?? nowMs()) - s.sinceMs) / 1000);
    },
  });
  new Gauge({
    name: DRAIN_METRIC.deadlineTimestampSeconds,
    help: "Unix time by which the drain wait ends at the latest (--drain-time after it started); 0 while serving.",
    registers: [registry],
    collect() {
      this.set((snapshot().deadlineMs ?? 0) / 1000);
    },
  });
  new Gauge({
    name: DRAIN_METRIC.inflightAtExit,
    help: "Envoy inbound downstream requests still active when the drain wait ended (-1: unknown or not yet ended).",
    registers: [registry],
    collect() {
      const s = snapshot();
      const ended = s.phase === "exiting" || s.phase === "done";
      this.set(ended && s.inflightAtExit !== undefined ? s.inflightAtExit : -1);
    },
  });
  const failures = new Counter({
    name: DRAIN_METRIC.envoyAdminFailures,
    help: "Envoy admin calls of the drain that failed after their retries, by call.",
    labelNames: [LABEL_CALL],
    registers: [registry],
  });
  for (const call of ["healthcheck_fail", "drain_listeners", "stats", "quit"] as const) failures.inc({ [LABEL_CALL]: call }, 0);
  return { envoyAdminFailure: (call) => failures.inc({ [LABEL_CALL]: call }) };
}
