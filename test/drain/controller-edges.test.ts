// The drain state machine's edges (fake clock, recorded effects): quit's published deadline, the in-flight read's
// bound and failures, drain-forever's bounded steps, signals with exitOnSignal, and the log and effect arguments.
import test from "ava";
import { DrainController, FORCED_EXIT_CODE, type DrainOptions, type DrainResult } from "../../extproc/drain/controller.js";
import { FakeClock } from "./fake-clock.js";
import { RecordingEffects, START_MS } from "./recording-effects.js";

const OPTIONS: DrainOptions = { drainMinMs: 5000, drainTimeMs: 30_000, pollIntervalMs: 200, callTimeoutMs: 2000, stopTimeoutMs: 10_000 };

function setup(options: Partial<DrainOptions> = {}) {
  const clock = new FakeClock();
  const rec = new RecordingEffects(clock);
  const lines: Array<{ msg: string; fields: Record<string, unknown> }> = [];
  const record = (fields: Record<string, unknown>, msg: string) => void lines.push({ msg, fields });
  const readyArgs: unknown[] = [];
  const effects = { ...rec.effects, setReady: (ready: false) => (readyArgs.push(ready), rec.effects.setReady(ready)) };
  const drain = new DrainController(effects, { ...OPTIONS, ...options }, clock, { info: record, warn: record });
  let result: DrainResult | undefined;
  void drain.done.then((r) => (result = r));
  return { clock, rec, drain, lines, readyArgs, result: () => result };
}

/** Fake-clock ms since the start of each readInflight call. */
const readTimes = (rec: RecordingEffects) => rec.calls.filter((c) => c.name === "readInflight").map((c) => c.atMs);

test("drain edges › given a serving sidecar, when quit, then the published deadline is now: there is no wait", (t) => {
  const { drain } = setup();
  void drain.quit("test");
  t.like(drain.snapshot(), { phase: "draining", mode: "exit", sinceMs: START_MS, deadlineMs: START_MS });
});

test("drain edges › given a drain, then readiness is told false", (t) => {
  const { drain, readyArgs } = setup();
  drain.signal("SIGTERM");
  t.deepEqual(readyArgs, [false]);
});

test("drain edges › given a serving sidecar, when forced, then it exits with the forced code and logs no time since a drain start", (t) => {
  const { drain, lines, result } = setup();
  drain.force("test");
  t.deepEqual(lines.map((l) => [l.msg, l.fields.afterMs]), [["drain abandoned: exiting now", null]]);
  return drain.done.then(() => t.deepEqual(result(), { exitCode: FORCED_EXIT_CODE, forced: true }));
});

test("drain edges › given an Envoy that never answers the in-flight read, then each read is cut at the call timeout and asked again", async (t) => {
  const { clock, rec, drain } = setup();
  rec.hang.add("readInflight");
  drain.signal("SIGTERM");
  await clock.advance(10_000);
  // reads at the minimum, then one call timeout (2000) and one poll interval (200) apart
  t.deepEqual(readTimes(rec), [5000, 7200, 9400]);
});

for (const [how, spoil] of [
  ["fails", (rec: RecordingEffects) => rec.fail.add("readInflight")],
  ["answers no count (the stat is gone)", (rec: RecordingEffects) => (rec.inflight = undefined)],
] as const) {
  test(`drain edges › given 3 requests in flight, when the in-flight read then ${how}, then the count at exit is still 3`, async (t) => {
    const { clock, rec, drain, lines } = setup();
    rec.inflight = 3;
    drain.signal("SIGTERM");
    await clock.advance(5100);
    t.deepEqual(readTimes(rec), [5000]);
    spoil(rec);
    await clock.advance(60_000);
    t.is(drain.snapshot().inflightAtExit, 3);
    t.like(lines.find((l) => l.fields.step === "wait")?.fields, { reason: "deadline", inflight: 3 });
  });
}

test("drain edges › given drain-forever and an Envoy that never answers /healthcheck/fail, then the next steps follow one call timeout later", async (t) => {
  const { clock, rec, drain } = setup();
  rec.hang.add("failEnvoyHealthchecks");
  drain.signal("SIGUSR2");
  await clock.advance(10_000);
  t.is(rec.at("drainListenersForever"), 2000);
  t.is(rec.at("markDraining"), 2000);
});

test("drain edges › given exitOnSignal and Envoy stuck stopping, when two more signals come, then the third exits at once with the forced code", async (t) => {
  const { clock, rec, drain, result } = setup({ exitOnSignal: true });
  rec.hang.add("stopEnvoy");
  t.is(drain.signal("SIGTERM"), "start");
  await clock.advance(100);
  t.like(drain.snapshot(), { mode: "exit" });
  t.is(drain.signal("SIGTERM"), "hurry");
  t.is(result(), undefined, "stuck stopping Envoy");
  t.is(drain.signal("SIGTERM"), "force");
  await clock.advance(0);
  t.deepEqual(result(), { exitCode: FORCED_EXIT_CODE, forced: true });
});
