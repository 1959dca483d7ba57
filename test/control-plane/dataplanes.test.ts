// Dataplane lifecycle in the embedded control plane: online, draining, offline after missed heartbeats,
// gone after DELETE, garbage-collected after the offline age, and state kept across restarts (over HTTP, and
// the DataplaneRegistry on its own with an injected clock).
import test from "ava";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import { DataplaneRegistry, type DataplaneLifecycleOptions } from "../../extproc/control-plane/dataplanes.js";
import type { ApiError } from "../../extproc/control-plane/problems.js";
import { ResourceStore } from "../../extproc/control-plane/store.js";
import { DATAPLANE_TYPE, type Resource } from "../../extproc/kuma-rest/resources.js";
import { createLogger, silentLogger } from "../../extproc/log.js";
import { call, dataplane, eventually, startTestControlPlane, tempDir } from "./helpers.js";

const DP = "/meshes/default/dataplanes/backend-1";

test("dataplanes › PUT registers online, heartbeats report draining, GET shows state and last seen", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  t.is((await call(cp.url, "PUT", DP, dataplane("backend-1"))).status, 201);
  const online = await call(cp.url, "GET", DP);
  t.is(online.body.status.state, "online");
  t.truthy(Date.parse(online.body.status.lastSeenTime));
  t.is(online.body.networking.inbound[0].tags["kuma.io/service"], "backend");
  const hb = await call(cp.url, "POST", `${DP}/_heartbeat`, { state: "draining" });
  t.is(hb.status, 200);
  t.is(hb.body.status.state, "draining");
  const list = await call(cp.url, "GET", "/meshes/default/dataplanes");
  t.is(list.body.items[0].status.state, "draining");
});

test("dataplanes › a dataplane that stops heartbeating turns offline; a heartbeat brings it back", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path, { offlineTimeoutMs: 1000 });
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  await call(cp.url, "PUT", DP, dataplane("backend-1"));
  t.true(await eventually(async () => (await call(cp.url, "GET", DP)).body.status.state === "offline"));
  const file = join(dir.path, "meshes", "default", "dataplanes", "backend-1.yaml");
  t.true(await eventually(async () => (await readFile(file, "utf8")).includes("state: offline")), "the sweep persisted the transition");
  const sentAt = Date.now();
  const back = await call(cp.url, "POST", `${DP}/_heartbeat`, {});
  t.is(back.status, 200);
  // The served state also depends on the time since (1 s timeout): on a loaded machine the write alone can take that long.
  t.true(Date.parse(back.body.status.lastSeenTime) >= sentAt - 1);
  t.regex(await readFile(file, "utf8"), /state: online/, "the heartbeat persisted online");
});

test("dataplanes › DELETE (graceful deregistration) makes it disappear rather than linger offline", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  await call(cp.url, "PUT", DP, dataplane("backend-1"));
  t.is((await call(cp.url, "DELETE", DP)).status, 200);
  t.is((await call(cp.url, "GET", DP)).status, 404);
  t.is((await call(cp.url, "GET", "/meshes/default/dataplanes")).body.total, 0);
  t.is((await call(cp.url, "POST", `${DP}/_heartbeat`, {})).status, 404);
});

test("dataplanes › offline dataplanes are garbage-collected after the configured age", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path, { offlineTimeoutMs: 1000, offlineGcAgeMs: 2000 });
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  await call(cp.url, "PUT", DP, dataplane("backend-1"));
  t.true(await eventually(async () => (await call(cp.url, "GET", DP)).status === 404, 15_000), "collected");
  t.is((await call(cp.url, "GET", "/meshes/default/dataplanes")).body.total, 0);
  // That a heartbeating one is kept is checked with an injected clock below: over HTTP, a loaded machine that
  // stalls for the 2 s age would collect it too.
});

test("dataplanes › an offline dataplane stays offline across a restart; an online one gets a fresh timeout", async (t) => {
  const dir = await tempDir();
  let cp = await startTestControlPlane(dir.path, { offlineTimeoutMs: 300 });
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  await call(cp.url, "PUT", DP, dataplane("backend-1"));
  t.true(await eventually(async () => (await call(cp.url, "GET", DP)).body.status.state === "offline"));
  const file = join(dir.path, "meshes", "default", "dataplanes", "backend-1.yaml");
  t.true(await eventually(async () => (await readFile(file, "utf8")).includes("state: offline")), "the sweep persisted the transition");
  await cp.stop();
  cp = await startTestControlPlane(dir.path, { offlineTimeoutMs: 60_000 });
  t.is((await call(cp.url, "GET", DP)).body.status.state, "offline");
  await call(cp.url, "PUT", "/meshes/default/dataplanes/fresh", dataplane("fresh"));
  await cp.stop();
  cp = await startTestControlPlane(dir.path, { offlineTimeoutMs: 60_000 });
  t.is((await call(cp.url, "GET", "/meshes/default/dataplanes/fresh")).body.status.state, "online");
});

test("dataplanes › an invalid Dataplane gets 400 with field paths", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const res = await call(cp.url, "PUT", DP, { type: "Dataplane", mesh: "default", name: "backend-1", networking: { inbound: [{ port: 70000, tags: {} }] } });
  t.is(res.status, 400);
  t.deepEqual(
    res.body.invalid_parameters.map((p: { field: string }) => p.field).sort(),
    ["networking.address", "networking.inbound[0].port", 'networking.inbound[0].tags["kuma.io/service"]'].sort(),
  );
});

// DataplaneRegistry on its own: a real store on a temp dir, an injected clock and a captured logger.

type LogLine = { level: number; msg: string } & Record<string, unknown>;
const T = Date.parse("2026-03-04T05:06:07.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

async function registryAt(t: { teardown(fn: () => Promise<void> | void): void }, opts: Partial<DataplaneLifecycleOptions> = {}, dir?: string) {
  const own = dir === undefined ? await tempDir() : undefined;
  if (own) t.teardown(() => own.remove());
  const clock = { ms: T };
  const lines: LogLine[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(...String(chunk).split("\n").filter(Boolean).map((l) => JSON.parse(l) as LogLine)), done()) });
  const log = createLogger("info", sink);
  const store = await ResourceStore.open(dir ?? own!.path, log);
  const registry = new DataplaneRegistry(store, { offlineTimeoutMs: 1000, offlineGcAgeMs: 10_000, now: () => clock.ms, ...opts }, log);
  return { registry, store, clock, lines, dataDir: dir ?? own!.path };
}

const stateOf = (r: Resource) => r.status as { state: string; lastSeenTime: string };
const stored = (store: ResourceStore, name = "backend-1") => store.get("Dataplane", "default", name)!;

test("dataplane registry › given a PUT body with its own status, when registered, then the status is replaced by online at the clock's time, on disk too", async (t) => {
  const { registry, store, dataDir } = await registryAt(t);
  const first = await registry.register("default", "backend-1", { ...dataplane("backend-1"), status: { state: "offline", lastSeenTime: "2001-01-01T00:00:00.000Z" } });
  t.true(first.created);
  t.deepEqual(first.resource.status, { state: "online", lastSeenTime: iso(T) });
  t.deepEqual(stored(store).status, { state: "online", lastSeenTime: iso(T) });
  t.is(stored(store).type, "Dataplane");
  t.regex(await readFile(join(dataDir, "meshes", "default", "dataplanes", "backend-1.yaml"), "utf8"), /state: online/);
  t.false((await registry.register("default", "backend-1", dataplane("backend-1"))).created);
});

test("dataplane registry › given inbounds, when registered, then it is draining only when there are inbounds and every one is NotReady", async (t) => {
  const { registry } = await registryAt(t);
  const withInbounds = (inbound: unknown) => ({ ...dataplane("d"), networking: { address: "10.0.0.1", inbound } });
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ["all NotReady", withInbounds([{ port: 1, state: "NotReady" }, { port: 2, state: "NotReady" }]), "draining"],
    ["one Ready", withInbounds([{ port: 1, state: "NotReady" }, { port: 2, state: "Ready" }]), "online"],
    ["no state", withInbounds([{ port: 1 }]), "online"],
    ["a null inbound", withInbounds([{ port: 1, state: "NotReady" }, null]), "online"],
    ["no inbounds", withInbounds([]), "online"],
    ["inbound not a list", withInbounds({ state: "NotReady" }), "online"],
    ["no networking", { type: "Dataplane" }, "online"],
  ];
  for (const [what, doc, want] of cases) t.is(stateOf((await registry.register("default", "d", doc)).resource).state, want, what);
});

test("dataplane registry › given a registered dataplane, when the clock passes the offline timeout, then it is served offline, but not at exactly the timeout", async (t) => {
  const { registry, store, clock } = await registryAt(t);
  await registry.register("default", "backend-1", dataplane("backend-1"));
  const at = (ms: number) => ((clock.ms = ms), stateOf(registry.view(stored(store))));
  t.deepEqual(at(T + 1000), { state: "online", lastSeenTime: iso(T) });
  t.deepEqual(at(T + 1001), { state: "offline", lastSeenTime: iso(T) });
  clock.ms = T + 5000;
  const back = await registry.heartbeat("default", "backend-1", undefined);
  t.deepEqual(back.status, { state: "online", lastSeenTime: iso(T + 5000) });
});

test("dataplane registry › given a heartbeat for a dataplane never registered, then it fails 404 naming it", async (t) => {
  const { registry } = await registryAt(t);
  const err = await t.throwsAsync(registry.heartbeat("default", "ghost", "online"));
  t.is((err as unknown as ApiError).status, 404);
  t.is((err as unknown as ApiError).detail, "dataplane default/ghost is not registered (PUT it first)");
});

test("dataplane registry › given heartbeats that change nothing persisted, then nothing is written but the served last-seen time moves", async (t) => {
  const { registry, store, clock } = await registryAt(t);
  await registry.register("default", "backend-1", dataplane("backend-1"));
  const revision = store.revision;
  clock.ms = T + 700;
  const hb = await registry.heartbeat("default", "backend-1", "online");
  t.deepEqual(hb.status, { state: "online", lastSeenTime: iso(T + 700) });
  clock.ms = T + 900;
  t.deepEqual((await registry.heartbeat("default", "backend-1", undefined)).status, { state: "online", lastSeenTime: iso(T + 900) });
  t.is(store.revision, revision);
  t.deepEqual(stored(store).status, { state: "online", lastSeenTime: iso(T) }, "the persisted time is the registration's");
  clock.ms = T + 1800;
  t.is(stateOf(registry.view(stored(store))).state, "online", "the timeout counts from the last heartbeat");
});

test("dataplane registry › given state changes by heartbeat, then each is persisted and logged with from and to, and a heartbeat without a state keeps draining", async (t) => {
  const { registry, store, clock, lines } = await registryAt(t);
  await registry.register("default", "backend-1", dataplane("backend-1"));
  clock.ms = T + 100;
  t.deepEqual((await registry.heartbeat("default", "backend-1", "draining")).status, { state: "draining", lastSeenTime: iso(T + 100) });
  t.deepEqual(stored(store).status, { state: "draining", lastSeenTime: iso(T + 100) });
  clock.ms = T + 200;
  const revision = store.revision;
  t.is(stateOf(await registry.heartbeat("default", "backend-1", undefined)).state, "draining");
  t.is(store.revision, revision, "no state given: draining stays, nothing written");
  clock.ms = T + 300;
  t.is(stateOf(await registry.heartbeat("default", "backend-1", "online")).state, "online");
  t.deepEqual(stored(store).status, { state: "online", lastSeenTime: iso(T + 300) });
  const changed = lines.filter((l) => l.msg === "dataplane state changed").map((l) => [l.level, l.mesh, l.name, l.from, l.to]);
  t.deepEqual(changed, [[30, "default", "backend-1", "online", "draining"], [30, "default", "backend-1", "draining", "online"]]);
});

test("dataplane registry › given a write of the dataplane still queued, when a heartbeat arrives, then it waits for it and answers from what that write left", async (t) => {
  const { registry, store, lines } = await registryAt(t);
  await registry.register("default", "backend-1", dataplane("backend-1"));
  const drained = store.update(DATAPLANE_TYPE, "default", "backend-1", (current) => ({ ...current, status: { state: "draining", lastSeenTime: iso(T) } }));
  const hb = await registry.heartbeat("default", "backend-1", undefined);
  await drained;
  t.is(stateOf(hb).state, "draining", "the heartbeat saw the queued write");
  t.is(store.revision, 2, "registration and the queued write: the heartbeat itself wrote nothing");
  t.false(lines.some((l) => l.msg === "dataplane state changed"));
  const deleting = registry.deregister("default", "backend-1");
  const err = await t.throwsAsync(registry.heartbeat("default", "backend-1", "online"));
  t.true(await deleting);
  t.is((err as unknown as ApiError).status, 404, "deleted while the heartbeat waited");
  t.is((err as unknown as ApiError).detail, "dataplane default/backend-1 is not registered (PUT it first)");
  t.false(await registry.deregister("default", "backend-1"));
});

test("dataplane registry › given a heartbeat that waited in the queue, when a later heartbeat answered first, then the last-seen time does not go back", async (t) => {
  const { registry, store, clock } = await registryAt(t);
  await registry.register("default", "backend-1", dataplane("backend-1"));
  clock.ms = T + 100;
  const slow = registry.heartbeat("default", "backend-1", "draining");
  clock.ms = T + 500;
  const fast = registry.heartbeat("default", "backend-1", "draining");
  t.deepEqual((await slow).status, { state: "draining", lastSeenTime: iso(T + 500) });
  t.deepEqual(registry.view(stored(store)).status, { state: "draining", lastSeenTime: iso(T + 500) });
  await fast;
});

test("dataplane registry › given a dataplane past the offline timeout, when swept, then offline is persisted with its last-seen time and logged once", async (t) => {
  const { registry, store, clock, lines } = await registryAt(t);
  await registry.register("default", "backend-1", dataplane("backend-1"));
  await registry.register("default", "alive", dataplane("alive"));
  clock.ms = T + 1500;
  await registry.heartbeat("default", "alive", undefined);
  await registry.sweep();
  t.deepEqual(stored(store).status, { state: "offline", lastSeenTime: iso(T) });
  t.deepEqual(stored(store, "alive").status, { state: "online", lastSeenTime: iso(T) });
  const revision = store.revision;
  await registry.sweep();
  t.is(store.revision, revision, "already offline: nothing written again");
  const offline = lines.filter((l) => l.msg === "dataplane went offline (missed heartbeats)").map((l) => [l.level, l.mesh, l.name, l.lastSeenTime]);
  t.deepEqual(offline, [[40, "default", "backend-1", iso(T)]]);
  t.false(lines.some((l) => l.msg === "garbage-collecting offline dataplane"));
});

test("dataplane registry › given two sweeps at once, when both find it offline, then it is written and logged once", async (t) => {
  const { registry, store, clock, lines } = await registryAt(t);
  await registry.register("default", "backend-1", dataplane("backend-1"));
  clock.ms = T + 5000;
  await Promise.all([registry.sweep(), registry.sweep()]);
  t.is(stateOf(stored(store)).state, "offline");
  t.is(store.revision, 2);
  t.is(lines.filter((l) => l.msg === "dataplane went offline (missed heartbeats)").length, 1);
});

test("dataplane registry › given a heartbeat queued behind a sweep, then the sweep does not mark it offline", async (t) => {
  const { registry, store, clock, lines } = await registryAt(t);
  await registry.register("default", "backend-1", dataplane("backend-1"));
  clock.ms = T + 5000;
  const sweep = registry.sweep();
  const hb = await registry.heartbeat("default", "backend-1", undefined);
  await sweep;
  t.deepEqual(hb.status, { state: "online", lastSeenTime: iso(T + 5000) });
  t.deepEqual(stored(store).status, { state: "online", lastSeenTime: iso(T) });
  t.false(lines.some((l) => l.msg === "dataplane went offline (missed heartbeats)"));
});

test("dataplane registry › given offline dataplanes, when swept at and before the collection age, then only those last seen that age ago or more are deleted, with a log line", async (t) => {
  const { registry, store, clock, lines } = await registryAt(t, { offlineTimeoutMs: 1000, offlineGcAgeMs: 10_000 });
  await registry.register("default", "old", dataplane("old"));
  clock.ms = T + 1;
  await registry.register("default", "young", dataplane("young"));
  clock.ms = T + 10_000;
  await registry.sweep();
  t.is(store.get("Dataplane", "default", "old"), undefined);
  t.deepEqual(stored(store, "young").status, { state: "offline", lastSeenTime: iso(T + 1) });
  const gc = lines.filter((l) => l.msg === "garbage-collecting offline dataplane").map((l) => [l.level, l.mesh, l.name, l.lastSeenTime]);
  t.deepEqual(gc, [[30, "default", "old", iso(T)]]);
  clock.ms = T + 10_001;
  await registry.sweep();
  t.deepEqual(store.list("Dataplane"), []);
});

test("dataplane registry › given a draining dataplane that stops heartbeating, when swept, then it goes offline too, and a heartbeat without state brings it back online", async (t) => {
  const { registry, store, clock, lines } = await registryAt(t);
  await registry.register("default", "backend-1", dataplane("backend-1"));
  await registry.heartbeat("default", "backend-1", "draining");
  clock.ms = T + 2000;
  await registry.sweep();
  t.is(stateOf(stored(store)).state, "offline");
  clock.ms = T + 2100;
  t.deepEqual((await registry.heartbeat("default", "backend-1", undefined)).status, { state: "online", lastSeenTime: iso(T + 2100) });
  t.deepEqual(stored(store).status, { state: "online", lastSeenTime: iso(T + 2100) });
  t.deepEqual(lines.filter((l) => l.msg === "dataplane state changed").map((l) => [l.from, l.to]), [["online", "draining"], ["offline", "online"]]);
});

test("dataplane registry › given dataplanes persisted by an earlier run, when a new registry starts, then offline ones stay offline at their time and online ones get one timeout from boot", async (t) => {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  const before = await registryAt(t, {}, dir.path);
  await before.registry.register("default", "gone", dataplane("gone"));
  await before.registry.register("default", "up", dataplane("up"));
  before.clock.ms = T + 2000;
  await before.registry.heartbeat("default", "up", undefined);
  await before.registry.sweep();
  t.is(stateOf(stored(before.store, "gone")).state, "offline");
  await before.store.put(DATAPLANE_TYPE, { ...dataplane("recent"), status: { state: "offline", lastSeenTime: iso(T + 50_000) } });
  await before.store.put(DATAPLANE_TYPE, { ...dataplane("undated"), status: { state: "offline" } });
  await before.store.put(DATAPLANE_TYPE, { ...dataplane("undated-up"), status: { state: "online" } });
  const after = await registryAt(t, {}, dir.path);
  after.clock.ms = T + 50_000;
  const boot = T + 50_000;
  const fresh = new DataplaneRegistry(after.store, { offlineTimeoutMs: 1000, offlineGcAgeMs: 10_000_000, now: () => after.clock.ms }, silentLogger());
  const view = (name: string) => fresh.view(stored(after.store, name)).status;
  t.deepEqual(view("gone"), { state: "offline", lastSeenTime: iso(T) });
  t.deepEqual(view("recent"), { state: "offline", lastSeenTime: iso(T + 50_000) }, "persisted offline and not heard from: offline whatever its time");
  t.deepEqual(view("undated"), { state: "offline", lastSeenTime: iso(0) });
  t.deepEqual(view("up"), { state: "online", lastSeenTime: iso(boot) });
  t.deepEqual(view("undated-up"), { state: "online", lastSeenTime: iso(boot) });
  after.clock.ms = boot + 1000;
  t.is(stateOf(fresh.view(stored(after.store, "up"))).state, "online");
  after.clock.ms = boot + 1001;
  t.is(stateOf(fresh.view(stored(after.store, "up"))).state, "offline");
  await fresh.heartbeat("default", "recent", "online");
  t.is(stateOf(fresh.view(stored(after.store, "recent"))).state, "online", "heard from again");
});

test("dataplane registry › given an offline dataplane persisted long ago, when the first sweep runs, then it is collected by its persisted time", async (t) => {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  const before = await registryAt(t, {}, dir.path);
  await before.store.put(DATAPLANE_TYPE, { ...dataplane("stale"), status: { state: "offline", lastSeenTime: iso(T - 10_000) } });
  await before.store.put(DATAPLANE_TYPE, { ...dataplane("idle"), status: { state: "online", lastSeenTime: iso(T - 10_000) } });
  const after = await registryAt(t, {}, dir.path);
  await after.registry.sweep();
  t.deepEqual(after.store.list("Dataplane").map((d) => d.name), ["idle"], "the online one was given the boot time");
  t.deepEqual(after.lines.filter((l) => l.msg === "garbage-collecting offline dataplane").map((l) => [l.name, l.lastSeenTime]), [["stale", iso(T - 10_000)]]);
});

/** Runs `fn` with setInterval/clearInterval replaced by recorders (synchronously: nothing else runs meanwhile). */
function withTimers(fn: () => void) {
  const started: Array<{ fn: () => void; ms: number; unref: boolean; cleared: boolean }> = [];
  const [realSet, realClear] = [globalThis.setInterval, globalThis.clearInterval];
  globalThis.setInterval = ((cb: () => void, ms: number) => {
    const timer = { fn: cb, ms, unref: false, cleared: false };
    started.push(timer);
    return { unref: () => ((timer.unref = true), timer) } as unknown as NodeJS.Timeout;
  }) as unknown as typeof setInterval;
  globalThis.clearInterval = ((h: { unref(): { cleared: boolean } } | undefined) => {
    if (h) h.unref().cleared = true;
  }) as unknown as typeof clearInterval;
  try {
    fn();
  } finally {
    globalThis.setInterval = realSet;
    globalThis.clearInterval = realClear;
  }
  return started;
}

test("dataplane registry › given offline timeouts, when started, then it sweeps every half timeout, at least every 200 ms and at most every 10 s, on an unref'd timer that stop() clears", async (t) => {
  const { store } = await registryAt(t);
  const interval = (offlineTimeoutMs: number) => {
    const reg = new DataplaneRegistry(store, { offlineTimeoutMs, offlineGcAgeMs: 1 }, silentLogger());
    const [timer] = withTimers(() => reg.start());
    return timer!;
  };
  t.is(interval(1000).ms, 500);
  t.is(interval(100).ms, 200);
  t.is(interval(400).ms, 200);
  t.is(interval(60_000).ms, 10_000);
  t.is(interval(20_000).ms, 10_000);
  t.true(interval(1000).unref);
  const reg = new DataplaneRegistry(store, { offlineTimeoutMs: 1000, offlineGcAgeMs: 1 }, silentLogger());
  const timers = withTimers(() => {
    reg.start();
    reg.stop();
  });
  t.true(timers[0]!.cleared);
});

test("dataplane registry › given a started registry, when its timer fires, then it sweeps, and a sweep that fails is logged as an error", async (t) => {
  const { store, clock, lines } = await registryAt(t);
  const log = createLogger("info", new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk)) as LogLine), done()) }));
  const reg = new DataplaneRegistry(store, { offlineTimeoutMs: 1000, offlineGcAgeMs: 100_000, now: () => clock.ms }, log);
  await reg.register("default", "backend-1", dataplane("backend-1"));
  clock.ms = T + 5000;
  const [timer] = withTimers(() => reg.start());
  const changed = new Promise((resolve) => store.once("change", resolve));
  timer!.fn();
  t.deepEqual(await changed, { kind: "Dataplane", mesh: "default", name: "backend-1", op: "put" });
  t.is(stateOf(stored(store)).state, "offline");
  const broken = { list: () => { throw new Error("disk gone"); } } as unknown as ResourceStore;
  const failing = new DataplaneRegistry(broken, { offlineTimeoutMs: 1000, offlineGcAgeMs: 1 }, log);
  const [failTimer] = withTimers(() => failing.start());
  failTimer!.fn();
  const logged = await eventually(() => lines.some((l) => l.msg === "dataplane sweep failed"), 5000);
  t.true(logged);
  const line = lines.find((l) => l.msg === "dataplane sweep failed")!;
  t.is(line.level, 50);
  t.is((line.err as { message: string }).message, "disk gone");
});

test("dataplane registry › given another resource's write in the queue, when a heartbeat changes nothing (online or draining), then it is answered before that write finishes", async (t) => {
  const { registry, store } = await registryAt(t);
  await registry.register("default", "up", dataplane("up"));
  await registry.register("default", "leaving", dataplane("leaving"));
  await registry.heartbeat("default", "leaving", "draining");
  for (const [name, state] of [["up", undefined], ["up", "online"], ["leaving", undefined], ["leaving", "draining"]] as const) {
    const order: string[] = [];
    const write = store.put(DATAPLANE_TYPE, { ...dataplane("other"), status: { state: "online" } }).then(() => order.push("write"));
    const hb = registry.heartbeat("default", name, state).then(() => order.push("heartbeat"));
    await Promise.all([write, hb]);
    t.deepEqual(order, ["heartbeat", "write"], `${name} ${state}`);
  }
});

test("dataplane registry › given a Dataplane stored without any status (a hand-written file), when served, then it is online from boot", async (t) => {
  const { registry, store } = await registryAt(t);
  await store.put(DATAPLANE_TYPE, dataplane("bare"));
  t.deepEqual(registry.view(stored(store, "bare")).status, { state: "online", lastSeenTime: iso(T) });
});

test("dataplane registry › given a collection age shorter than the offline timeout, when an online dataplane last seen longer ago than that age is swept, then it stays, online", async (t) => {
  const { registry, store, clock } = await registryAt(t, { offlineTimeoutMs: 30_000, offlineGcAgeMs: 1_000 });
  await registry.register("default", "backend-1", dataplane("backend-1"));
  clock.ms = T + 5_000;

  await registry.sweep();

  t.deepEqual(stateOf(registry.view(stored(store))), { state: "online", lastSeenTime: iso(T) });
});
