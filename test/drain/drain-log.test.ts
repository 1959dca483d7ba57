// The drain's log, line by line, for each way a drain goes: what an operator reads to know which step ran, which was
// skipped or timed out, why the wait ended and how the process exited (the state machine with a fake clock).
import test from "ava";
import { DrainController, type DrainOptions } from "../../extproc/drain/controller.js";
import type { DrainLog } from "../../extproc/drain/types.js";
import { FakeClock } from "./fake-clock.js";
import { RecordingEffects } from "./recording-effects.js";

const OPTIONS: DrainOptions = { drainMinMs: 5000, drainTimeMs: 30_000, pollIntervalMs: 200, callTimeoutMs: 2000, stopTimeoutMs: 10_000 };
type Line = [level: "info" | "warn", msg: string, fields: Record<string, unknown>];

function setup(options: Partial<DrainOptions> = {}) {
  const clock = new FakeClock();
  const rec = new RecordingEffects(clock);
  const lines: Line[] = [];
  const log: DrainLog = { info: (fields, msg) => lines.push(["info", msg, fields]), warn: (fields, msg) => lines.push(["warn", msg, fields]) };
  const drain = new DrainController(rec.effects, { ...OPTIONS, ...options }, clock, log);
  return { clock, rec, drain, lines };
}


/** Each way a drain goes, as a script against the fake clock; `run` returns the drain's log lines. */
const SCENARIOS: Record<string, { options?: Partial<DrainOptions>; run: (s: ReturnType<typeof setup>) => Promise<void> }> = {
  "requests finish after the minimum": {
    run: async ({ clock, rec, drain }) => {
      rec.inflight = 2;
      drain.signal("SIGTERM");
      await clock.advance(6000);
      rec.inflight = 0;
      await clock.advance(60_000);
    },
  },
  "requests outlast the deadline": {
    run: async ({ clock, rec, drain }) => {
      rec.inflight = 3;
      drain.signal("SIGINT");
      await clock.advance(60_000);
    },
  },
  "a second signal hurries, a third forces": {
    run: async ({ clock, rec, drain }) => {
      rec.inflight = 1;
      rec.hang.add("deregister");
      drain.signal("SIGTERM");
      await clock.advance(1000);
      drain.signal("SIGTERM");
      await clock.advance(500);
      drain.signal("SIGTERM");
      drain.signal("SIGTERM");
      await clock.advance(60_000);
    },
  },
  "quit while serving": {
    run: async ({ clock, drain }) => {
      void drain.quit("job done");
      await clock.advance(60_000);
    },
  },
  "drain forever, then SIGTERM": {
    options: { drainListeners: true },
    run: async ({ clock, drain }) => {
      drain.signal("SIGUSR2");
      await clock.advance(100_000);
      drain.signal("SIGUSR2");
      drain.signal("SIGTERM");
      await clock.advance(60_000);
    },
  },
  "exit on signal": {
    options: { exitOnSignal: true },
    run: async ({ clock, drain }) => {
      drain.signal("SIGTERM");
      await clock.advance(60_000);
    },
  },
  "steps that fail and hang": {
    options: { drainListeners: true },
    run: async ({ clock, rec, drain }) => {
      rec.fail.add("failEnvoyHealthchecks");
      rec.hang.add("drainListeners");
      rec.fail.add("readInflight");
      rec.hang.add("stopEnvoy");
      void drain.start("POST /drain");
      drain.signal("SIGTERM");
      await clock.advance(120_000);
    },
  },
};

async function drainLog(name: string): Promise<Line[]> {
  const scenario = SCENARIOS[name]!;
  const s = setup(scenario.options);
  await scenario.run(s);
  return s.lines;
}

test("drain log › given two requests in flight until 6 s, when SIGTERM starts a drain, then it waits past the minimum for them and exits 0", async (t) => {
  // Given / when: the scenario "requests finish after the minimum" on a fake clock
  const lines = await drainLog("requests finish after the minimum");
  // Then the log reads, line by line
  t.deepEqual(lines, [
    ["info", "received SIGTERM: start", {"signal": "SIGTERM", "count": 1, "outcome": "start", "phase": "serving"}],
    ["info", "drain started", {"step": "start", "mode": "drain", "trigger": "SIGTERM", "drainMinMs": 5000, "drainTimeMs": 30000, "deadline": "1970-01-01T00:17:10.000Z"}],
    ["info", "drain step ready_503_health_not_serving: ok", {"step": "ready_503_health_not_serving", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain step envoy_healthcheck_fail: ok", {"step": "envoy_healthcheck_fail", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain step control_plane_draining: ok", {"step": "control_plane_draining", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain wait over: no requests in flight", {"step": "wait", "reason": "no requests in flight", "ms": 6200, "afterMs": 6200, "inflight": 0}],
    ["info", "drain step control_plane_deregister: ok", {"step": "control_plane_deregister", "outcome": "ok", "ms": 0, "afterMs": 6200}],
    ["info", "drain step stop_envoy: ok", {"step": "stop_envoy", "outcome": "ok", "ms": 0, "afterMs": 6200}],
    ["info", "drain step close_servers: ok", {"step": "close_servers", "outcome": "ok", "ms": 0, "afterMs": 6200}],
    ["info", "drain complete", {"step": "exit", "exitCode": 0, "afterMs": 6200}],
  ]);
});

test("drain log › given requests in flight past the deadline, when SIGINT starts a drain, then the wait ends at the deadline with their count", async (t) => {
  // Given / when: the scenario "requests outlast the deadline" on a fake clock
  const lines = await drainLog("requests outlast the deadline");
  // Then the log reads, line by line
  t.deepEqual(lines, [
    ["info", "received SIGINT: start", {"signal": "SIGINT", "count": 1, "outcome": "start", "phase": "serving"}],
    ["info", "drain started", {"step": "start", "mode": "drain", "trigger": "SIGINT", "drainMinMs": 5000, "drainTimeMs": 30000, "deadline": "1970-01-01T00:17:10.000Z"}],
    ["info", "drain step ready_503_health_not_serving: ok", {"step": "ready_503_health_not_serving", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain step envoy_healthcheck_fail: ok", {"step": "envoy_healthcheck_fail", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain step control_plane_draining: ok", {"step": "control_plane_draining", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain wait over: deadline", {"step": "wait", "reason": "deadline", "ms": 30000, "afterMs": 30000, "inflight": 3}],
    ["info", "drain step control_plane_deregister: ok", {"step": "control_plane_deregister", "outcome": "ok", "ms": 0, "afterMs": 30000}],
    ["info", "drain step stop_envoy: ok", {"step": "stop_envoy", "outcome": "ok", "ms": 0, "afterMs": 30000}],
    ["info", "drain step close_servers: ok", {"step": "close_servers", "outcome": "ok", "ms": 0, "afterMs": 30000}],
    ["info", "drain complete", {"step": "exit", "exitCode": 0, "afterMs": 30000}],
  ]);
});

test("drain log › given a drain whose deregistration hangs, when signals 2, 3 and 4 arrive, then it hurries, is abandoned, and ignores the rest", async (t) => {
  // Given / when: the scenario "a second signal hurries, a third forces" on a fake clock
  const lines = await drainLog("a second signal hurries, a third forces");
  // Then the log reads, line by line
  t.deepEqual(lines, [
    ["info", "received SIGTERM: start", {"signal": "SIGTERM", "count": 1, "outcome": "start", "phase": "serving"}],
    ["info", "drain started", {"step": "start", "mode": "drain", "trigger": "SIGTERM", "drainMinMs": 5000, "drainTimeMs": 30000, "deadline": "1970-01-01T00:17:10.000Z"}],
    ["info", "drain step ready_503_health_not_serving: ok", {"step": "ready_503_health_not_serving", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain step envoy_healthcheck_fail: ok", {"step": "envoy_healthcheck_fail", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain step control_plane_draining: ok", {"step": "control_plane_draining", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "received SIGTERM: hurry", {"signal": "SIGTERM", "count": 2, "outcome": "hurry", "phase": "draining"}],
    ["info", "drain cut short: going to the exit steps", {"step": "hurry", "reason": "SIGTERM #2", "afterMs": 1000}],
    ["info", "drain wait over: signal", {"step": "wait", "reason": "signal", "ms": 1000, "afterMs": 1000, "inflight": null}],
    ["info", "received SIGTERM: force", {"signal": "SIGTERM", "count": 3, "outcome": "force", "phase": "exiting"}],
    ["warn", "drain abandoned: exiting now", {"step": "force", "reason": "SIGTERM #3", "afterMs": 1500}],
    ["info", "received SIGTERM: ignored", {"signal": "SIGTERM", "count": 4, "outcome": "ignored", "phase": "done"}],
  ]);
});

test("drain log › given a serving sidecar, when quit, then Envoy's drain and the control plane are skipped and Envoy is told to quit", async (t) => {
  // Given / when: the scenario "quit while serving" on a fake clock
  const lines = await drainLog("quit while serving");
  // Then the log reads, line by line
  t.deepEqual(lines, [
    ["info", "exiting now, without a drain", {"step": "start", "mode": "exit", "trigger": "job done"}],
    ["info", "drain step ready_503_health_not_serving: ok", {"step": "ready_503_health_not_serving", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain step envoy_healthcheck_fail: skipped", {"step": "envoy_healthcheck_fail", "outcome": "skipped"}],
    ["info", "drain step control_plane_draining: skipped", {"step": "control_plane_draining", "outcome": "skipped"}],
    ["info", "drain wait over: exit", {"step": "wait", "reason": "exit", "ms": 0, "afterMs": 0, "inflight": null}],
    ["info", "drain step control_plane_deregister: ok", {"step": "control_plane_deregister", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain step quit_envoy: ok", {"step": "quit_envoy", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain step close_servers: ok", {"step": "close_servers", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain complete", {"step": "exit", "exitCode": 0, "afterMs": 0}],
  ]);
});

test("drain log › given drain-forever by SIGUSR2, when SIGUSR2 again and then SIGTERM, then the second is ignored and SIGTERM goes to the exit steps", async (t) => {
  // Given / when: the scenario "drain forever, then SIGTERM" on a fake clock
  const lines = await drainLog("drain forever, then SIGTERM");
  // Then the log reads, line by line
  t.deepEqual(lines, [
    ["info", "received SIGUSR2: forever", {"signal": "SIGUSR2", "outcome": "forever", "phase": "serving"}],
    ["info", "drain started: draining forever until SIGTERM", {"step": "start", "mode": "forever", "trigger": "SIGUSR2"}],
    ["info", "drain step ready_503_health_not_serving: ok", {"step": "ready_503_health_not_serving", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain step envoy_healthcheck_fail: ok", {"step": "envoy_healthcheck_fail", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain step envoy_drain_listeners_forever: ok", {"step": "envoy_drain_listeners_forever", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain step control_plane_draining: ok", {"step": "control_plane_draining", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "received SIGUSR2: ignored", {"signal": "SIGUSR2", "outcome": "ignored", "phase": "draining"}],
    ["info", "received SIGTERM: hurry", {"signal": "SIGTERM", "count": 1, "outcome": "hurry", "phase": "draining"}],
    ["info", "drain cut short: going to the exit steps", {"step": "hurry", "reason": "SIGTERM #1", "afterMs": 100000}],
    ["info", "drain-forever over: signal", {"step": "wait", "reason": "signal", "afterMs": 100000}],
    ["info", "drain step control_plane_deregister: ok", {"step": "control_plane_deregister", "outcome": "ok", "ms": 0, "afterMs": 100000}],
    ["info", "drain step stop_envoy: ok", {"step": "stop_envoy", "outcome": "ok", "ms": 0, "afterMs": 100000}],
    ["info", "drain step close_servers: ok", {"step": "close_servers", "outcome": "ok", "ms": 0, "afterMs": 100000}],
    ["info", "drain complete", {"step": "exit", "exitCode": 0, "afterMs": 100000}],
  ]);
});

test("drain log › given exitOnSignal, when SIGTERM, then it exits at once without a drain", async (t) => {
  // Given / when: the scenario "exit on signal" on a fake clock
  const lines = await drainLog("exit on signal");
  // Then the log reads, line by line
  t.deepEqual(lines, [
    ["info", "received SIGTERM: start", {"signal": "SIGTERM", "count": 1, "outcome": "start", "phase": "serving"}],
    ["info", "exiting now, without a drain", {"step": "start", "mode": "exit", "trigger": "SIGTERM"}],
    ["info", "drain step ready_503_health_not_serving: ok", {"step": "ready_503_health_not_serving", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain step envoy_healthcheck_fail: skipped", {"step": "envoy_healthcheck_fail", "outcome": "skipped"}],
    ["info", "drain step control_plane_draining: skipped", {"step": "control_plane_draining", "outcome": "skipped"}],
    ["info", "drain wait over: exit", {"step": "wait", "reason": "exit", "ms": 0, "afterMs": 0, "inflight": null}],
    ["info", "drain step control_plane_deregister: ok", {"step": "control_plane_deregister", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain step stop_envoy: ok", {"step": "stop_envoy", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain step close_servers: ok", {"step": "close_servers", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["info", "drain complete", {"step": "exit", "exitCode": 0, "afterMs": 0}],
  ]);
});

test("drain log › given steps that fail or hang, when POST /drain then SIGTERM, then each step's failure or timeout is a warning and the drain still completes", async (t) => {
  // Given / when: the scenario "steps that fail and hang" on a fake clock
  const lines = await drainLog("steps that fail and hang");
  // Then the log reads, line by line
  t.deepEqual(lines, [
    ["info", "drain started", {"step": "start", "mode": "drain", "trigger": "POST /drain", "drainMinMs": 5000, "drainTimeMs": 30000, "deadline": "1970-01-01T00:17:10.000Z"}],
    ["info", "received SIGTERM: start", {"signal": "SIGTERM", "count": 1, "outcome": "start", "phase": "draining"}],
    ["info", "drain step ready_503_health_not_serving: ok", {"step": "ready_503_health_not_serving", "outcome": "ok", "ms": 0, "afterMs": 0}],
    ["warn", "drain step envoy_healthcheck_fail: failed", {"step": "envoy_healthcheck_fail", "outcome": "failed", "ms": 0, "afterMs": 0, "err": "failEnvoyHealthchecks failed"}],
    ["warn", "drain step envoy_drain_listeners: timeout", {"step": "envoy_drain_listeners", "outcome": "timeout", "ms": 2000, "afterMs": 2000}],
    ["info", "drain step control_plane_draining: ok", {"step": "control_plane_draining", "outcome": "ok", "ms": 0, "afterMs": 2000}],
    ["info", "drain wait over: deadline", {"step": "wait", "reason": "deadline", "ms": 28000, "afterMs": 30000, "inflight": null}],
    ["info", "drain step control_plane_deregister: ok", {"step": "control_plane_deregister", "outcome": "ok", "ms": 0, "afterMs": 30000}],
    ["warn", "drain step stop_envoy: timeout", {"step": "stop_envoy", "outcome": "timeout", "ms": 10000, "afterMs": 40000}],
    ["info", "drain step close_servers: ok", {"step": "close_servers", "outcome": "ok", "ms": 0, "afterMs": 40000}],
    ["info", "drain complete", {"step": "exit", "exitCode": 0, "afterMs": 40000}],
  ]);
});
