// The drain state machine with a fake clock and recorded effects: order, wait bounds, signals.
import test from "ava";
import { DrainController, FORCED_EXIT_CODE, type DrainOptions, type DrainResult } from "../../extproc/drain/controller.js";
import { FakeClock } from "./fake-clock.js";
import { RecordingEffects } from "./recording-effects.js";

const OPTIONS: DrainOptions = { drainMinMs: 5000, drainTimeMs: 30_000, pollIntervalMs: 200, callTimeoutMs: 2000, stopTimeoutMs: 10_000 };

function setup(options: Partial<DrainOptions> = {}) {
  const clock = new FakeClock();
  const rec = new RecordingEffects(clock);
  const drain = new DrainController(rec.effects, { ...OPTIONS, ...options }, clock);
  let result: DrainResult | undefined;
  let doneAtMs: number | undefined;
  void drain.done.then((r) => {
    result = r;
    doneAtMs = clock.now() - 1_000_000;
  });
  return { clock, rec, drain, result: () => result, doneAtMs: () => doneAtMs };
}

test("drain › first signal runs every step in order and exits 0", async (t) => {
  const { clock, rec, drain, result } = setup();
  t.is(drain.signal("SIGTERM"), "start");
  await clock.advance(60_000);
  t.deepEqual(rec.names(), [
    "setReady",
    "setHealthNotServing",
    "failEnvoyHealthchecks",
    "markDraining",
    "deregister",
    "stopEnvoy",
    "closeServers",
  ]);
  const order = rec.names({ withPolls: true });
  t.true(order.indexOf("readInflight") > order.indexOf("markDraining"), "in-flight is polled after the control plane hears draining");
  t.true(order.indexOf("deregister") > order.lastIndexOf("readInflight"), "deregistration follows the wait");
  t.is(rec.at("readInflight"), 5000, "the first poll comes at the minimum");
  t.deepEqual(result(), { exitCode: 0, forced: false });
  t.is(drain.phase, "done");
});

test("drain › local state flips synchronously, before any Envoy call answers", (t) => {
  const { rec, drain } = setup();
  rec.hang.add("failEnvoyHealthchecks");
  drain.signal("SIGTERM");
  // given no timer has run and no promise settled yet
  t.deepEqual(rec.names().slice(0, 2), ["setReady", "setHealthNotServing"]);
  t.is(drain.snapshot().phase, "draining");
  t.is(drain.snapshot().deadlineMs! - drain.snapshot().sinceMs!, 30_000);
});

test("drain › with drainListeners, /drain_listeners follows /healthcheck/fail", async (t) => {
  const { clock, rec, drain } = setup({ drainListeners: true });
  drain.signal("SIGTERM");
  await clock.advance(10_000);
  t.deepEqual(rec.names().slice(2, 5), ["failEnvoyHealthchecks", "drainListeners", "markDraining"]);
});

test("drain › stays at least drainMinMs even with nothing in flight", async (t) => {
  const { clock, rec, drain, doneAtMs } = setup();
  rec.inflight = 0;
  drain.signal("SIGTERM");
  await clock.advance(4900);
  t.is(rec.count("deregister"), 0);
  t.is(rec.count("readInflight"), 0, "no polling before the minimum");
  await clock.advance(1000);
  t.is(rec.at("deregister"), 5000);
  t.is(doneAtMs(), 5000);
});

test("drain › leaves early once in-flight requests reach 0 after the minimum", async (t) => {
  const { clock, rec, drain, doneAtMs } = setup();
  rec.inflight = 3;
  drain.signal("SIGTERM");
  await clock.advance(8000);
  t.is(rec.count("deregister"), 0, "requests in flight hold the drain");
  rec.inflight = 0;
  await clock.advance(1000);
  t.true(doneAtMs()! >= 8000 && doneAtMs()! <= 8200, `left at ${doneAtMs()}ms, within one poll of 8000ms`);
  t.is(drain.snapshot().inflightAtExit, 0);
});

test("drain › the deadline holds when requests never finish", async (t) => {
  const { clock, rec, drain, doneAtMs } = setup();
  rec.inflight = 2;
  drain.signal("SIGTERM");
  await clock.advance(60_000);
  t.is(rec.at("deregister"), 30_000);
  t.is(doneAtMs(), 30_000);
  t.is(drain.snapshot().inflightAtExit, 2);
});

test("drain › the minimum drain time counts from the drain's start, not from the end of slow pre-wait steps", async (t) => {
  // given Envoy's /healthcheck/fail and the control plane's "draining" each hang for the whole call timeout
  // (2000ms each), so the wait only begins 4000ms after the signal, with nothing in flight
  const { clock, rec, drain, result } = setup({ drainMinMs: 5000, drainTimeMs: 30_000 });
  rec.hang.add("failEnvoyHealthchecks");
  rec.hang.add("markDraining");
  // when the drain starts
  drain.signal("SIGTERM");
  await clock.advance(60_000);
  // then the wait began at 4000ms, and in-flight is first read at 5000ms: the minimum from the start
  t.is(rec.at("markDraining"), 2000);
  t.is(rec.at("readInflight"), 5000, "not 4000 + 5000");
  t.is(rec.at("deregister"), 5000, "the drain leaves at the minimum, with nothing in flight");
  t.deepEqual(result(), { exitCode: 0, forced: false });
});

test("drain › pre-wait steps slower than the minimum drain time: in-flight is read as soon as the wait begins", async (t) => {
  // given a 1000ms minimum and two pre-wait steps hanging 2000ms each
  const { clock, rec, drain } = setup({ drainMinMs: 1000 });
  rec.hang.add("failEnvoyHealthchecks");
  rec.hang.add("markDraining");
  drain.signal("SIGTERM");
  await clock.advance(60_000);
  // then the minimum has long passed when the wait begins at 4000ms: no further sleep before the first read
  t.is(rec.at("readInflight"), 4000);
  t.is(rec.at("deregister"), 4000);
});

test("drain › the deadline holds when Envoy and the control plane never answer", async (t) => {
  const { clock, rec, drain, result, doneAtMs } = setup();
  for (const name of ["failEnvoyHealthchecks", "markDraining", "readInflight", "deregister"] as const) rec.hang.add(name);
  drain.signal("SIGTERM");
  await clock.advance(60_000);
  t.is(rec.at("markDraining"), 2000, "a hanging Envoy delays the next step by one call timeout");
  t.is(rec.at("deregister"), 30_000, "the wait ends at the deadline");
  t.is(doneAtMs(), 32_000, "deregistration is bounded by the call timeout");
  t.deepEqual(result(), { exitCode: 0, forced: false });
});

test("drain › the last poll interval is shortened so the wait ends exactly at the deadline", async (t) => {
  // given polls every 200ms from 5000ms and a deadline at 5300ms that is not on that grid
  const { clock, rec, drain } = setup({ drainTimeMs: 5300 });
  rec.inflight = 2;
  drain.signal("SIGTERM");
  await clock.advance(10_000);
  // then the wait ends at 5300ms, not at the next poll (5400ms)
  t.is(rec.at("deregister"), 5300);
});

test("drain › a hanging Envoy call is cut at the deadline when that comes before the call timeout", async (t) => {
  // given a 1s drain time, a 2s call timeout and an Envoy admin that never answers
  const { clock, rec, drain } = setup({ drainMinMs: 0, drainTimeMs: 1000 });
  rec.hang.add("failEnvoyHealthchecks");
  drain.signal("SIGTERM");
  await clock.advance(10_000);
  // then the control plane hears "draining" and the dataplane is deregistered at the deadline, not after 2s
  t.is(rec.at("markDraining"), 1000);
  t.is(rec.at("deregister"), 1000);
});

test("drain › failing effects are logged and the sequence goes on", async (t) => {
  const { clock, rec, drain, result } = setup();
  for (const name of ["failEnvoyHealthchecks", "markDraining", "readInflight", "deregister", "stopEnvoy"] as const) rec.fail.add(name);
  drain.signal("SIGTERM");
  await clock.advance(60_000);
  t.is(rec.count("closeServers"), 1);
  t.deepEqual(result(), { exitCode: 0, forced: false });
});

test("drain › second signal cuts the wait short and goes to the exit steps", async (t) => {
  const { clock, rec, drain, doneAtMs } = setup();
  rec.inflight = 5;
  drain.signal("SIGTERM");
  await clock.advance(1000);
  t.is(drain.signal("SIGTERM"), "hurry");
  await clock.advance(0);
  t.is(rec.at("deregister"), 1000);
  t.is(doneAtMs(), 1000);
  t.is(drain.snapshot().deadlineMs! - drain.snapshot().sinceMs!, 1000, "the published deadline moves to now");
});

test("drain › second signal during a hanging Envoy call skips to deregistration", async (t) => {
  const { clock, rec, drain } = setup();
  rec.hang.add("failEnvoyHealthchecks");
  drain.signal("SIGTERM");
  await clock.advance(500);
  drain.signal("SIGINT");
  await clock.advance(0);
  t.is(rec.count("markDraining"), 0);
  t.is(rec.at("deregister"), 500);
  t.is(rec.count("closeServers"), 1);
});

test("drain › third signal exits at once with the forced exit code", async (t) => {
  const { clock, rec, drain, result } = setup();
  rec.hang.add("stopEnvoy");
  drain.signal("SIGTERM");
  drain.signal("SIGTERM");
  await clock.advance(100);
  t.is(result(), undefined, "stuck stopping Envoy");
  t.is(drain.signal("SIGTERM"), "force");
  await clock.advance(0);
  t.deepEqual(result(), { exitCode: FORCED_EXIT_CODE, forced: true });
  await clock.advance(60_000);
  t.is(rec.count("closeServers"), 0, "nothing runs after a forced exit");
  t.is(drain.signal("SIGTERM"), "ignored");
});

test("drain › start is idempotent", async (t) => {
  const { clock, rec, drain } = setup();
  const first = drain.start("POST /drain");
  const second = drain.start("POST /drain");
  t.is(first, second);
  await clock.advance(60_000);
  for (const name of ["setReady", "failEnvoyHealthchecks", "markDraining", "deregister", "closeServers"] as const) t.is(rec.count(name), 1, name);
});

test("drain › a SIGTERM after POST /drain does not cut the drain short", async (t) => {
  const { clock, rec, drain } = setup();
  rec.inflight = 1;
  void drain.start("POST /drain");
  await clock.advance(1000);
  t.is(drain.signal("SIGTERM"), "start");
  await clock.advance(5000);
  t.is(rec.count("deregister"), 0);
  t.is(drain.snapshot().deadlineMs! - drain.snapshot().sinceMs!, 30_000);
});

test("drain › drained resolves after deregistration and before Envoy stops", async (t) => {
  const { clock, rec, drain } = setup();
  const seenAtDrained: string[] = [];
  void drain.drained.then(() => seenAtDrained.push(...rec.names()));
  drain.signal("SIGTERM");
  await clock.advance(60_000);
  t.is(seenAtDrained.at(-1), "deregister");
  t.false(seenAtDrained.includes("stopEnvoy"));
});

test("drain › snapshot reports serving, then since and deadline", async (t) => {
  const { clock, drain } = setup();
  t.deepEqual(drain.snapshot(), { phase: "serving", mode: undefined, sinceMs: undefined, deadlineMs: undefined, drainedAtMs: undefined, inflightAtExit: undefined });
  await clock.advance(10);
  drain.signal("SIGTERM");
  t.is(drain.snapshot().sinceMs, 1_000_010);
  t.is(drain.snapshot().deadlineMs, 1_030_010);
  await clock.advance(60_000);
  t.is(drain.snapshot().drainedAtMs, 1_005_010);
});
