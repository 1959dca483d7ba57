// Drain-forever and quit in the pure state machine (fake clock, recorded effects): SIGUSR2 drains
// without a deadline, a SIGTERM then exits at once; quit skips Envoy's drain and tells Envoy to exit.
import test from "ava";
import { DrainController, type DrainOptions, type DrainResult } from "../../extproc/drain/controller.js";
import { FakeClock } from "./fake-clock.js";
import { RecordingEffects, START_MS } from "./recording-effects.js";

const OPTIONS: DrainOptions = { drainMinMs: 5000, drainTimeMs: 30_000, pollIntervalMs: 200, callTimeoutMs: 2000, stopTimeoutMs: 10_000 };

function setup() {
  const clock = new FakeClock();
  const rec = new RecordingEffects(clock);
  const drain = new DrainController(rec.effects, OPTIONS, clock);
  let result: DrainResult | undefined;
  let doneAtMs: number | undefined;
  void drain.done.then((r) => {
    result = r;
    doneAtMs = clock.now() - START_MS;
  });
  return { clock, rec, drain, result: () => result, doneAtMs: () => doneAtMs };
}

test("drain forever › SIGUSR2 fails health checks, drains inbound listeners with skip_exit, tells the control plane, and never exits on its own", async (t) => {
  const { clock, rec, drain, result } = setup();
  t.is(drain.signal("SIGUSR2"), "forever");
  await clock.advance(600_000);
  t.deepEqual(rec.names(), ["setReady", "setHealthNotServing", "failEnvoyHealthchecks", "drainListenersForever", "markDraining"]);
  t.is(rec.count("readInflight"), 0, "no deadline, so nothing to poll for");
  t.is(result(), undefined, "still running after 10 minutes");
  t.like(drain.snapshot(), { phase: "draining", mode: "forever", sinceMs: START_MS, deadlineMs: undefined });
});

test("drain forever › the SIGTERM that follows exits at once: deregister, stop Envoy, close, exit 0 — no second drain wait", async (t) => {
  const { clock, rec, drain, result, doneAtMs } = setup();
  drain.signal("SIGUSR2");
  await clock.advance(20_000);
  t.is(drain.signal("SIGTERM"), "hurry");
  await clock.advance(0);
  t.deepEqual(rec.names().slice(5), ["deregister", "stopEnvoy", "closeServers"]);
  t.deepEqual(result(), { exitCode: 0, forced: false });
  t.is(doneAtMs(), 20_000, "exited in the same instant as the SIGTERM");
});

test("drain forever › a second SIGUSR2, or one during a timed drain, changes nothing", async (t) => {
  const a = setup();
  a.drain.signal("SIGUSR2");
  t.is(a.drain.signal("SIGUSR2"), "ignored");
  await a.clock.advance(100);
  t.is(a.rec.count("drainListenersForever"), 1);
  const b = setup();
  b.drain.signal("SIGTERM");
  t.is(b.drain.signal("SIGUSR2"), "ignored");
  await b.clock.advance(60_000);
  t.is(b.rec.count("drainListenersForever"), 0);
  t.like(b.drain.snapshot(), { mode: "drain", phase: "done" });
});

test("drain forever › POST-style drainForever after a timed drain started is a no-op; a third signal still forces", async (t) => {
  const { clock, drain, result } = setup();
  void drain.drainForever("preStop");
  t.is(drain.signal("SIGTERM"), "hurry");
  t.is(drain.signal("SIGTERM"), "hurry");
  await clock.advance(0);
  t.deepEqual(result(), { exitCode: 0, forced: false });
});

test("quit › from serving: no Envoy drain, no wait, Envoy told to exit, exit 0", async (t) => {
  const { clock, rec, drain, result, doneAtMs } = setup();
  void drain.quit("POST /quitquitquit");
  await clock.advance(0);
  t.deepEqual(rec.names(), ["setReady", "setHealthNotServing", "deregister", "quitEnvoy", "closeServers"]);
  t.deepEqual(result(), { exitCode: 0, forced: false });
  t.is(doneAtMs(), 0);
});

test("quit › during a timed drain: cuts the wait short and quits Envoy instead of only stopping our child", async (t) => {
  const { clock, rec, drain, doneAtMs } = setup();
  drain.signal("SIGTERM");
  await clock.advance(1000);
  void drain.quit("POST /quitquitquit");
  await clock.advance(0);
  t.true(rec.names().includes("quitEnvoy"));
  t.false(rec.names().includes("stopEnvoy"));
  t.is(doneAtMs(), 1000);
});

test("exit on signal › with exitOnSignal a first SIGTERM while serving skips Envoy's drain and the wait: deregister, stop Envoy, exit 0", async (t) => {
  const clock = new FakeClock();
  const rec = new RecordingEffects(clock);
  const drain = new DrainController(rec.effects, { ...OPTIONS, exitOnSignal: true }, clock);
  t.is(drain.signal("SIGTERM"), "start");
  await clock.advance(0);
  t.deepEqual(rec.names(), ["setReady", "setHealthNotServing", "deregister", "stopEnvoy", "closeServers"]);
  t.deepEqual(await drain.done, { exitCode: 0, forced: false });
  t.is(drain.snapshot().mode, "exit");
});
