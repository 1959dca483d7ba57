// drain › metrics: the sidecar's drain gauges as a scrape reads them from the controller's snapshot, each
// phase and mode, and the failed Envoy admin calls counted by call.
import test from "ava";
import { Registry } from "prom-client";
import { DRAIN_METRIC, registerDrainMetrics } from "../../extproc/drain/metrics.js";
import type { DrainSnapshot } from "../../extproc/drain/types.js";

const SERVING: DrainSnapshot = { phase: "serving", mode: undefined, sinceMs: undefined, deadlineMs: undefined, drainedAtMs: undefined, inflightAtExit: undefined };

/** A registry whose drain metrics read `snap`, at the clock `nowMs`. */
function scrape(snap: DrainSnapshot, nowMs = 0) {
  const registry = new Registry();
  const metrics = registerDrainMetrics(registry, () => snap, () => nowMs);
  const value = async (name: string, labels: Record<string, string> = {}) => {
    const values = (await registry.getSingleMetric(name)!.get()).values;
    return values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
  };
  return { metrics, value };
}

test("drain metrics › given a sidecar serving, then it is not draining, has no drain time or deadline, no in-flight reading and no failed call", async (t) => {
  const { value } = scrape(SERVING, 5000);
  t.is(await value(DRAIN_METRIC.draining), 0);
  t.is(await value(DRAIN_METRIC.drainingForever), 0);
  t.is(await value(DRAIN_METRIC.durationSeconds), 0);
  t.is(await value(DRAIN_METRIC.deadlineTimestampSeconds), 0);
  t.is(await value(DRAIN_METRIC.inflightAtExit), -1);
  for (const call of ["healthcheck_fail", "drain_listeners", "stats", "quit"]) t.is(await value(DRAIN_METRIC.envoyAdminFailures, { call }), 0, call);
});

test("drain metrics › given a drain started at 1 s with a deadline at 21 s, when scraped at 4.5 s, then it drains for 3.5 s towards 21", async (t) => {
  const { value } = scrape({ ...SERVING, phase: "draining", mode: "drain", sinceMs: 1000, deadlineMs: 21_000 }, 4500);
  t.is(await value(DRAIN_METRIC.draining), 1);
  t.is(await value(DRAIN_METRIC.drainingForever), 0, "a drain (SIGTERM) is not forever");
  t.is(await value(DRAIN_METRIC.durationSeconds), 3.5);
  t.is(await value(DRAIN_METRIC.deadlineTimestampSeconds), 21);
  t.is(await value(DRAIN_METRIC.inflightAtExit), -1, "the wait has not ended");
  const polled = scrape({ ...SERVING, phase: "draining", mode: "drain", sinceMs: 1000, deadlineMs: 21_000, inflightAtExit: 4 }, 4500);
  t.is(await polled.value(DRAIN_METRIC.inflightAtExit), -1, "a reading taken during the wait is not the one at exit yet");
});

test("drain metrics › given a drain that finished at 3 s, when scraped later, then its duration stops at 2 s and the in-flight reading at exit shows", async (t) => {
  for (const phase of ["exiting", "done"] as const) {
    const { value } = scrape({ ...SERVING, phase, mode: "drain", sinceMs: 1000, deadlineMs: 21_000, drainedAtMs: 3000, inflightAtExit: 3 }, 60_000);
    t.is(await value(DRAIN_METRIC.durationSeconds), 2, phase);
    t.is(await value(DRAIN_METRIC.inflightAtExit), 3, phase);
    t.is(await value(DRAIN_METRIC.draining), 1, phase);
  }
  const unknown = scrape({ ...SERVING, phase: "exiting", mode: "drain", sinceMs: 1000, drainedAtMs: 3000 });
  t.is(await unknown.value(DRAIN_METRIC.inflightAtExit), -1, "no reading: unknown");
  const none = scrape({ ...SERVING, phase: "done", mode: "drain", sinceMs: 1000, drainedAtMs: 3000, inflightAtExit: 0 });
  t.is(await none.value(DRAIN_METRIC.inflightAtExit), 0, "zero is a reading");
});

test("drain metrics › given a drain forever, then it counts as draining forever only while it drains", async (t) => {
  t.is(await scrape({ ...SERVING, phase: "draining", mode: "forever", sinceMs: 0 }).value(DRAIN_METRIC.drainingForever), 1);
  t.is(await scrape({ ...SERVING, mode: "forever" }).value(DRAIN_METRIC.drainingForever), 0, "serving");
});

test("drain metrics › when an Envoy admin call fails, then only that call's counter goes up", async (t) => {
  const { metrics, value } = scrape(SERVING);
  metrics.envoyAdminFailure("stats");
  metrics.envoyAdminFailure("stats");
  t.is(await value(DRAIN_METRIC.envoyAdminFailures, { call: "stats" }), 2);
  t.is(await value(DRAIN_METRIC.envoyAdminFailures, { call: "quit" }), 0);
});
