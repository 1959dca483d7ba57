// installDrain against a real admin server, the stand-in Envoy admin and a recording control plane:
// call order, /drain and /ready, POST /drain?wait=true, deadlines, metrics. Real timers, short drains.
import test, { type ExecutionContext } from "ava";
import { Registry } from "prom-client";
import { registerBasicRoutes } from "../../extproc/admin/routes.js";
import { AdminServer } from "../../extproc/admin/server.js";
import type { DataplaneLifecycle } from "../../extproc/dataplane-lifecycle.js";
import { installDrain, type DrainSettings } from "../../extproc/drain/install.js";
import { Writable } from "node:stream";
import { createLogger } from "../../extproc/log.js";
import { Readiness } from "../../extproc/readiness.js";
import { FakeEnvoyAdmin } from "../helpers/fake-envoy-admin.js";
import { eventually } from "../control-plane/helpers.js";

const SETTINGS: Omit<DrainSettings, "envoyAdmin"> = {
  inboundStatPrefix: "inbound",
  drainMinMs: 300,
  drainTimeMs: 3000,
  drainListeners: false,
  envoyKillGraceMs: 1000,
};

/** A control plane that records markDraining/deregister on the shared timeline; can hang. */
class RecordingControlPlane implements DataplaneLifecycle {
  hang = false;
  constructor(private readonly timeline: { name: string; atMs: number }[]) {}
  register = async () => {};
  markDraining = () => this.record("cp markDraining");
  deregister = () => this.record("cp deregister");
  private record(name: string): Promise<void> {
    this.timeline.push({ name, atMs: Date.now() });
    return this.hang ? new Promise(() => {}) : Promise.resolve();
  }
}

async function setup(t: ExecutionContext, settings: Partial<DrainSettings> = {}) {
  const envoy = await FakeEnvoyAdmin.start();
  const timeline: { name: string; atMs: number }[] = [];
  const controlPlane = new RecordingControlPlane(timeline);
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger("info", new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  const registry = new Registry();
  const readiness = new Readiness();
  const admin = new AdminServer(log);
  registerBasicRoutes(admin, registry, readiness);
  const healthServing: boolean[] = [];
  let stopped = false;
  const host = {
    log,
    registry,
    readiness,
    admin,
    health: { setServing: (s: boolean) => void healthServing.push(s) },
    stop: async () => {
      timeline.push({ name: "servers closed", atMs: Date.now() });
      stopped = true;
      await admin.close();
    },
  };
  const drain = installDrain(host, { ...SETTINGS, envoyAdmin: envoy.url, ...settings }, { lifecycle: controlPlane, callTimeoutMs: 500 });
  /** Messages of the drain's log lines (level warn and above when asked). */
  const logged = (opts: { warn?: boolean } = {}) => lines.filter((l) => l.component === "drain" && (!opts.warn || Number(l.level) >= 40)).map((l) => String(l.msg));
  const info = await admin.listen("127.0.0.1:0");
  const base = `http://127.0.0.1:${info.port}`;
  t.teardown(async () => {
    drain.force("test over");
    if (!stopped) await admin.close();
    await envoy.close();
  });
  /** Envoy calls and control-plane calls, merged in time order. */
  const order = (withStats = false) =>
    [...envoy.calls.filter((c) => withStats || c.path !== "/stats").map((c) => ({ name: `envoy ${c.method} ${c.path}`, atMs: c.atMs })), ...timeline]
      .sort((a, b) => a.atMs - b.atMs)
      .map((c) => c.name);
  return { envoy, controlPlane, drain, base, healthServing, registry, order, timeline, logged, lines };
}

test("drain › POST /drain runs Envoy, control-plane and close steps in order", async (t) => {
  const { drain, base, order, healthServing } = await setup(t, { drainListeners: true });
  const res = await fetch(`${base}/drain`, { method: "POST" });
  t.is(res.status, 202);
  t.like(await res.json(), { draining: true });
  t.deepEqual(await drain.done, { exitCode: 0, forced: false });
  t.deepEqual(order(), [
    "envoy POST /healthcheck/fail",
    "envoy POST /drain_listeners",
    "cp markDraining",
    "cp deregister",
    "servers closed",
  ]);
  t.deepEqual(healthServing, [false]);
});

test("drain › GET /drain and /ready change at once, and the stats poll comes after the control plane", async (t) => {
  const { drain, base, order } = await setup(t);
  t.deepEqual(await (await fetch(`${base}/drain`)).json(), { draining: false, since: null, deadline: null });
  t.is((await fetch(`${base}/ready`)).status, 200);
  const before = Date.now();
  void drain.start("test");
  const body = (await (await fetch(`${base}/drain`)).json()) as { draining: boolean; since: string; deadline: string };
  t.true(body.draining);
  t.true(Math.abs(Date.parse(body.since) - before) < 1000);
  t.is(Date.parse(body.deadline) - Date.parse(body.since), 3000);
  t.is((await fetch(`${base}/ready`)).status, 503);
  await drain.done;
  const calls = order(true);
  t.true(calls.indexOf("envoy GET /stats") > calls.indexOf("cp markDraining"));
  t.true(calls.indexOf("cp deregister") > calls.lastIndexOf("envoy GET /stats"));
});

test("drain › POST /drain?wait=true answers only once draining is complete", async (t) => {
  // (a deadline far past the 800 ms at which in-flight reaches 0: a loaded machine cannot turn the one into the other)
  const { envoy, drain, base, timeline } = await setup(t, { drainTimeMs: 10_000 });
  envoy.downstreamRqActive = 2;
  setTimeout(() => (envoy.downstreamRqActive = 0), 800);
  const t0 = Date.now();
  const res = await fetch(`${base}/drain?wait=true`, { method: "POST" });
  const ms = Date.now() - t0;
  t.is(res.status, 200);
  t.like(await res.json(), { draining: true });
  t.true(ms >= 750 && ms < 9000, `answered after ${ms}ms: once in-flight reached 0, before the deadline`);
  t.truthy(timeline.find((c) => c.name === "cp deregister"), "deregistered before the answer");
  t.deepEqual(await drain.done, { exitCode: 0, forced: false });
});

test("drain › GET /drain/prestop starts draining and answers when complete", async (t) => {
  const { drain, base, timeline } = await setup(t);
  const res = await fetch(`${base}/drain/prestop`);
  t.is(res.status, 200);
  t.truthy(timeline.find((c) => c.name === "cp deregister"));
  t.is((await drain.done).exitCode, 0);
});

test("drain › the deadline holds when Envoy never answers", async (t) => {
  const { envoy, drain, registry } = await setup(t);
  envoy.mode = "hang";
  const t0 = Date.now();
  void drain.start("test");
  t.is((await drain.done).exitCode, 0);
  const ms = Date.now() - t0;
  t.true(ms >= 2900 && ms < 5000, `exited after ${ms}ms (deadline 3000ms)`);
  const metrics = await registry.metrics();
  t.regex(metrics, /meshext_sidecar_envoy_admin_failures_total\{call="healthcheck_fail"\} 1/);
  t.regex(metrics, /meshext_sidecar_envoy_admin_failures_total\{call="stats"\} [1-9]/);
});

test("drain › the deadline holds when the control plane never answers", async (t) => {
  const { controlPlane, drain, order } = await setup(t);
  controlPlane.hang = true;
  const t0 = Date.now();
  void drain.start("test");
  t.is((await drain.done).exitCode, 0);
  const ms = Date.now() - t0;
  t.true(ms >= 300 && ms < 3000, `exited after ${ms}ms`);
  t.deepEqual(order().slice(-2), ["cp deregister", "servers closed"]);
});

test("drain › metrics show draining, duration and in-flight at exit", async (t) => {
  const { envoy, drain, registry } = await setup(t);
  t.regex(await registry.metrics(), /^meshext_sidecar_draining 0$/m);
  envoy.downstreamRqActive = 3;
  const startedAt = Date.now();
  void drain.start("test");
  t.regex(await registry.metrics(), /^meshext_sidecar_draining 1$/m);
  // once the wait has read Envoy's in-flight count (after the 300ms minimum): a second poll is only sent once the first
  // answer was read (a hurry while the first is in flight leaves the count unknown); and at least 600ms in
  t.true(await eventually(() => envoy.calls.filter((c) => c.path === "/stats").length >= 2, 20_000), "the drain wait read in-flight");
  await new Promise((r) => setTimeout(r, Math.max(0, startedAt + 600 - Date.now())));
  drain.hurry("test");
  await drain.done;
  const elapsedS = (Date.now() - startedAt) / 1000;
  const metrics = await registry.metrics();
  t.regex(metrics, /^meshext_sidecar_drain_inflight_requests_at_exit 3$/m);
  const duration = Number(/^meshext_sidecar_drain_duration_seconds (\S+)$/m.exec(metrics)?.[1]);
  t.true(duration >= 0.5 && duration <= elapsedS + 0.01, `duration ${duration}s of ${elapsedS}s`);
});

test("drain › POST /drain?mode=forever reports draining everywhere the timed drain does, calls Envoy with skip_exit, does not deregister", async (t) => {
  const { envoy, drain, base, healthServing, registry, order } = await setup(t);
  const res = await fetch(`${base}/drain?mode=forever`, { method: "POST" });
  t.is(res.status, 202);
  // once the control plane has heard "draining" (the last step of drain-forever)
  t.true(await eventually(() => order().includes("cp markDraining"), 20_000), "the control plane heard draining");
  t.like(await (await fetch(`${base}/drain`)).json(), { draining: true, deadline: null });
  t.is((await fetch(`${base}/ready`)).status, 503);
  t.deepEqual(healthServing, [false]);
  const metrics = await registry.metrics();
  t.regex(metrics, /^meshext_sidecar_draining 1$/m);
  t.regex(metrics, /^meshext_sidecar_draining_forever 1$/m);
  t.deepEqual(order(), ["envoy POST /healthcheck/fail", "envoy POST /drain_listeners", "cp markDraining"]);
  t.is(envoy.calls.find((c) => c.path === "/drain_listeners")?.url, "/drain_listeners?inboundonly&graceful&skip_exit");
  t.is((await fetch(`${base}/drain?mode=sometimes`, { method: "POST" })).status, 400);
  // the SIGTERM that ends it: straight to deregistration and exit
  t.is(drain.signal("SIGTERM"), "hurry");
  t.deepEqual(await drain.done, { exitCode: 0, forced: false });
  t.deepEqual(order().slice(3), ["cp deregister", "servers closed"]);
});

test("drain › POST /quitquitquit: no Envoy drain, Envoy told to quit, exit 0", async (t) => {
  const { drain, base, order } = await setup(t);
  const res = await fetch(`${base}/quitquitquit`, { method: "POST" });
  t.is(res.status, 202);
  t.deepEqual(await drain.done, { exitCode: 0, forced: false });
  t.deepEqual(order(), ["cp deregister", "envoy POST /quitquitquit", "servers closed"]);
});

test("drain › without --envoy-admin, installing warns once that Envoy will not be told to drain; with it, nothing is said", async (t) => {
  const withAdmin = await setup(t);
  t.deepEqual(withAdmin.logged({ warn: true }), []);
  const without = await setup(t, { envoyAdmin: undefined });
  t.deepEqual(without.logged({ warn: true }), ["no --envoy-admin: Envoy will not be told to drain, and the drain waits the full --drain-time"]);
});

test("drain › given an Envoy that does not report the inbound stat, when the drain polls it many times, then one warning names the stat", async (t) => {
  const { envoy, base, logged, lines } = await setup(t, { drainMinMs: 0, drainTimeMs: 1500 });
  envoy.statPrefix = "other_listener";
  await fetch(`${base}/drain`, { method: "POST" });
  await eventually(() => envoy.calls.filter((c) => c.path === "/stats").length >= 3, 3000);
  t.deepEqual(logged({ warn: true }).filter((m) => m.startsWith("Envoy does not report")), ["Envoy does not report this stat: check --inbound-stat-prefix; the drain waits the full --drain-time"]);
  t.is(lines.find((l) => String(l.msg).startsWith("Envoy does not report"))?.stat, "http.inbound.downstream_rq_active");
});

test("drain › while draining, /ready names the draining gate", async (t) => {
  const { base } = await setup(t, { drainMinMs: 1000 });
  await fetch(`${base}/drain`, { method: "POST" });
  const ready = await fetch(`${base}/ready`);
  t.is(ready.status, 503);
  t.deepEqual(await ready.json(), { ready: false, notReady: { draining: "draining" } });
});
