// installDrain's settings as the drain sees them: exit on SIGTERM or not, Envoy's stop bound, the servers' close
// grace, GET /drain/wait's bound and the in-flight stat warning. In process: a recording host, no admin server.
import test from "ava";
import { Writable } from "node:stream";
import { Registry } from "prom-client";
import type { AdminHandler, AdminRequest } from "../../extproc/admin/server.js";
import { installDrain, type DrainSettings, type InstallDrainOptions } from "../../extproc/drain/install.js";
import { createLogger } from "../../extproc/log.js";
import { FakeEnvoyAdmin } from "../helpers/fake-envoy-admin.js";
import { FakeClock } from "./fake-clock.js";

const SETTINGS: DrainSettings = { envoyAdmin: "", inboundStatPrefix: "inbound", drainMinMs: 0, drainTimeMs: 50, drainListeners: false, envoyKillGraceMs: 400 };

/** A host that records the drain's log lines, its routes and the grace its servers are closed with. */
function setup(settings: Partial<DrainSettings> = {}, options: InstallDrainOptions = {}) {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger("info", new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  const routes = new Map<string, AdminHandler>();
  const closeGraces: Array<number | undefined> = [];
  const host = {
    log,
    registry: new Registry(),
    readiness: { set: () => {} },
    health: { setServing: () => {} },
    admin: { route: (method: string, path: string, handler: AdminHandler) => void routes.set(`${method} ${path}`, handler) },
    stop: async (graceMs?: number) => void closeGraces.push(graceMs),
  };
  const drain = installDrain(host, { ...SETTINGS, ...settings }, options);
  const messages = () => lines.filter((l) => l.component === "drain").map((l) => String(l.msg));
  return { drain, routes, closeGraces, messages };
}

/** A request to a route that the client never closes. */
const request = (path: string): AdminRequest => ({ method: "GET", path, query: new URLSearchParams(), headers: {}, body: Buffer.alloc(0), closed: new Promise(() => {}) });

test("install settings › given no exitOnSigterm, when SIGTERM comes, then a timed drain starts", (t) => {
  const { drain } = setup();
  drain.signal("SIGTERM");
  t.like(drain.snapshot(), { phase: "draining", mode: "drain" });
  drain.force("test over");
});

test("install settings › given exitOnSigterm, when SIGTERM comes, then it exits without a drain", (t) => {
  const { drain } = setup({ exitOnSigterm: true });
  drain.signal("SIGTERM");
  t.like(drain.snapshot(), { phase: "draining", mode: "exit" });
  drain.force("test over");
});

test("install settings › given the servers' close grace or none, when the drain ends, then the servers close with it or with 2000 ms", async (t) => {
  for (const [serverCloseGraceMs, expected] of [[750, 750], [undefined, 2000]] as const) {
    const { drain, closeGraces } = setup({}, { serverCloseGraceMs });
    t.deepEqual(await drain.start("test"), { exitCode: 0, forced: false });
    t.deepEqual(closeGraces, [expected]);
  }
});

test("install settings › given an Envoy of ours that takes longer than its kill grace to stop, then the drain waits for it, up to the grace plus 5 s", async (t) => {
  // given a 1 s kill grace and an Envoy that stops 5.5 s after being told (fake clock)
  const clock = new FakeClock();
  const stopEnvoy = () => new Promise<void>((resolve) => clock.setTimeout(resolve, 5500));
  const { drain, messages } = setup({ envoyKillGraceMs: 1000, drainTimeMs: 1000 }, { clock, stopEnvoy });
  let doneAtMs: number | undefined;
  void drain.start("test").then(() => (doneAtMs = clock.now() - 1_000_000));
  await clock.advance(20_000);
  // then stopping Envoy is waited for, and the drain ends once it has stopped
  t.true(messages().includes("drain step stop_envoy: ok"), messages().join("\n"));
  t.is(doneAtMs, 6500);
});

test("install settings › given GET /drain/wait while a short drain runs, whatever the call timeout and Envoy's kill grace, then it answers drained once the drain is complete", async (t) => {
  // given a 50 ms drain: the wait's bound (50 ms + call timeout + kill grace + 5 s) is far longer, with a long
  // kill grace or a long call timeout alike; and a control plane that answers deregistration a timer tick later
  // (so the drain cannot be complete before the timers due when GET /drain/wait came have fired)
  const lifecycle = { register: async () => {}, markDraining: async () => {}, deregister: () => new Promise<void>((resolve) => setTimeout(resolve, 1)) };
  for (const [callTimeoutMs, envoyKillGraceMs] of [[200, 400], [200, 10_000], [10_000, 400]]) {
    const { drain, routes } = setup({ envoyKillGraceMs }, { callTimeoutMs, lifecycle });
    void drain.start("test");
    const reply = await routes.get("GET /drain/wait")!(request("/drain/wait"));
    t.is(reply.status, 200, `call timeout ${callTimeoutMs} ms, kill grace ${envoyKillGraceMs} ms`);
    t.deepEqual(JSON.parse(String(reply.body)), { drained: true });
  }
});

test("install settings › given an Envoy that reports the inbound stat, when the drain reads it, then nothing is said about a missing stat", async (t) => {
  const envoy = await FakeEnvoyAdmin.start();
  t.teardown(() => envoy.close());
  const { drain, messages } = setup({ envoyAdmin: envoy.url, drainTimeMs: 5000 });
  await drain.start("test");
  t.true(envoy.calls.some((c) => c.path === "/stats"), "the drain read Envoy's stats");
  t.deepEqual(messages().filter((m) => m.startsWith("Envoy does not report")), []);
});
