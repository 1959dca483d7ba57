// drain › a forced exit (third signal) at every stage of the drain: whatever was running when it came may end
// later, but nothing after it runs and nothing more is logged as if the drain went on; and a hurry outside the wait (before any drain, or once the wait is over) changes nothing. Fake clock.
import test from "ava";
import { DrainController, FORCED_EXIT_CODE, type DrainOptions, type DrainResult } from "../../extproc/drain/controller.js";
import { FakeClock } from "./fake-clock.js";
import { RecordingEffects, START_MS, type EffectName } from "./recording-effects.js";

const OPTIONS: DrainOptions = { drainMinMs: 5000, drainTimeMs: 30_000, pollIntervalMs: 200, callTimeoutMs: 2000, stopTimeoutMs: 10_000 };

function setup() {
  const clock = new FakeClock();
  const rec = new RecordingEffects(clock);
  const lines: string[] = [];
  const log = { info: (_: Record<string, unknown>, msg: string) => void lines.push(msg), warn: (_: Record<string, unknown>, msg: string) => void lines.push(msg) };
  const drain = new DrainController(rec.effects, OPTIONS, clock, log);
  let result: DrainResult | undefined;
  void drain.done.then((r) => (result = r));
  /** Three signals: start, hurry, force (or, when already started, whatever they do then). */
  const forceNow = () => {
    while (drain.signal("SIGTERM") !== "force");
  };
  return { clock, rec, drain, lines, forceNow, result: () => result };
}

/** The effects called, and the lines logged, after the forced exit's line. */
function afterForce(rec: RecordingEffects, lines: string[], callsBefore: number) {
  return { effects: rec.calls.slice(callsBefore).map((c) => c.name), lines: lines.slice(lines.findIndex((l) => l.startsWith("drain abandoned")) + 1) };
}

for (const [stage, late, atMs, inflight] of [
  ["reading in-flight requests (the answer, 0, comes after the force)", "readInflight", 5100, 0],
  ["waiting between two in-flight reads (3 requests in flight)", "readInflight", 5100, 3],
  ["deregistering", "deregister", 5100, 0],
  ["closing the servers", "closeServers", 5100, 0],
] as Array<[string, EffectName, number, number]>) {
  test(`drain force › given a forced exit while ${stage}, when that call ends, then nothing more runs or is logged`, async (t) => {
    const { clock, rec, drain, lines, result } = setup();
    rec.inflight = inflight;
    if (inflight === 0) rec.delayMs.set(late, 500);
    drain.signal("SIGTERM");
    await clock.advance(atMs);
    t.truthy(rec.at(late), `${late} was called`);
    const before = rec.calls.length;
    drain.force("test");
    await clock.advance(60_000);
    t.deepEqual(result(), { exitCode: FORCED_EXIT_CODE, forced: true });
    t.deepEqual(afterForce(rec, lines, before), { effects: [], lines: [] });
    t.is(drain.phase, "done");
  });
}

test("drain force › given a drain forever, when three SIGTERMs come at once, then the forced exit is all that follows", async (t) => {
  const { clock, rec, drain, lines, forceNow, result } = setup();
  drain.signal("SIGUSR2");
  await clock.advance(1000);
  const before = rec.calls.length;
  forceNow();
  await clock.advance(60_000);
  t.deepEqual(result(), { exitCode: FORCED_EXIT_CODE, forced: true });
  t.deepEqual(afterForce(rec, lines, before), { effects: [], lines: [] });
});

test("drain force › given a drain forever, when a SIGTERM cuts it short, then the deadline is now", async (t) => {
  const { clock, drain } = setup();
  drain.signal("SIGUSR2");
  await clock.advance(1000);
  t.is(drain.snapshot().deadlineMs, undefined, "forever: no deadline");
  t.is(drain.signal("SIGTERM"), "hurry");
  t.is(drain.snapshot().deadlineMs, clock.now());
});

test("drain force › a hurry is logged once, and not at all once the wait is over", async (t) => {
  const { clock, rec, drain, lines } = setup();
  rec.hang.add("stopEnvoy");
  drain.signal("SIGTERM");
  drain.hurry("first");
  drain.hurry("again");
  t.is(lines.filter((l) => l.startsWith("drain cut short")).length, 1);
  await clock.advance(100);
  t.is(drain.phase, "exiting");
  drain.hurry("while exiting");
  t.is(lines.filter((l) => l.startsWith("drain cut short")).length, 1);
});

test("drain force › given a drain that completed, when forced, then nothing is logged and the result stays", async (t) => {
  const { clock, drain, lines, result } = setup();
  drain.signal("SIGTERM");
  await clock.advance(60_000);
  const logged = lines.length;
  drain.force("late");
  t.is(lines.length, logged);
  t.deepEqual(result(), { exitCode: 0, forced: false });
});

test("drain force › given a drain whose wait ended with no requests in flight, when a second SIGTERM comes while Envoy stops, then nothing is cut short: no hurry logged, the deadline stays", async (t) => {
  // Given a drain whose wait ended at drainMinMs (nothing in flight), now stopping an Envoy that does not exit
  const { clock, rec, drain, lines } = setup();
  rec.hang.add("stopEnvoy");
  drain.signal("SIGTERM");
  await clock.advance(5100);
  t.is(drain.phase, "exiting");
  const deadline = drain.snapshot().deadlineMs;
  // When a second SIGTERM comes (counted as a hurry)
  t.is(drain.signal("SIGTERM"), "hurry");
  // Then the wait it would cut is over already: nothing is logged as cut short and the deadline is the drain's own
  t.is(lines.filter((l) => l.startsWith("drain cut short")).length, 0);
  t.is(drain.snapshot().deadlineMs, deadline);
  t.is(deadline, START_MS + OPTIONS.drainTimeMs);
});

test("drain force › given a sidecar still serving, when hurried (Envoy gone before any drain), then nothing changes: a drain started later runs every step and waits", async (t) => {
  // Given a serving sidecar that is hurried before any drain started
  const { clock, rec, drain, lines } = setup();
  rec.inflight = 3;
  drain.hurry("too early");
  // Then nothing is logged and no deadline set
  t.deepEqual(lines, []);
  t.is(drain.snapshot().deadlineMs, undefined);
  // When a drain starts afterwards
  drain.signal("SIGTERM");
  await clock.advance(1000);
  // Then Envoy's and the control plane's drain steps run, and the drain is still waiting (requests in flight)
  t.deepEqual(rec.names(), ["setReady", "setHealthNotServing", "failEnvoyHealthchecks", "markDraining"]);
  t.is(drain.phase, "draining");
});
