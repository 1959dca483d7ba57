// The drain's admin routes as handlers (no HTTP): which paths exist and who may call them, what each starts, the
// status and headers each answers with, ?mode and ?wait, and /drain/wait's three endings.
import test from "ava";
import { DEFAULT_ACCESS } from "../../extproc/admin/access.js";
import type { AdminHandler, AdminRequest } from "../../extproc/admin/server.js";
import type { DrainSnapshot } from "../../extproc/drain/controller.js";
import { DRAIN_PATHS, registerDrainRoutes } from "../../extproc/drain/routes.js";

/** A drain stand-in that records what the routes start, and whose `drained` the test resolves. */
function fakeDrain() {
  const calls: string[] = [];
  let snapshot: DrainSnapshot = { phase: "serving", mode: undefined, sinceMs: undefined, deadlineMs: undefined, drainedAtMs: undefined, inflightAtExit: undefined };
  let markDrained!: () => void;
  const drained = new Promise<void>((r) => (markDrained = r));
  const drain = {
    snapshot: () => snapshot,
    start: (trigger: string) => {
      calls.push(`start ${trigger}`);
      snapshot = { ...snapshot, phase: "draining", mode: "drain", sinceMs: 0, deadlineMs: 30_000 };
      return new Promise<never>(() => {});
    },
    drainForever: (trigger: string) => {
      calls.push(`forever ${trigger}`);
      snapshot = { ...snapshot, phase: "draining", mode: "forever", sinceMs: 0 };
      return new Promise<never>(() => {});
    },
    quit: (trigger: string) => {
      calls.push(`quit ${trigger}`);
      return new Promise<never>(() => {});
    },
    drained,
  };
  return { drain, calls, markDrained };
}

function setup(maxWaitMs = 60_000) {
  const routes = new Map<string, { handler: AdminHandler; access: string }>();
  const admin = { route: (method: string, path: string, handler: AdminHandler, access: string = DEFAULT_ACCESS) => void routes.set(`${method} ${path}`, { handler, access }) };
  const d = fakeDrain();
  registerDrainRoutes(admin, d.drain as never, maxWaitMs);
  let closeRequest!: () => void;
  const closed = new Promise<void>((r) => (closeRequest = r));
  const call = async (method: string, path: string, query = "") => {
    const req = { method, path, query: new URLSearchParams(query), headers: {}, body: Buffer.alloc(0), closed } as unknown as AdminRequest;
    const reply = await routes.get(`${method} ${path}`)!.handler(req);
    return { status: reply.status, headers: reply.headers, body: JSON.parse(String(reply.body)) as unknown };
  };
  return { routes, call, closeRequest, ...d };
}

const DRAINING = { draining: true, since: "1970-01-01T00:00:00.000Z", deadline: "1970-01-01T00:00:30.000Z" };
const JSON_NO_STORE = { "content-type": "application/json", "cache-control": "no-store" };

test("drain routes › given the routes, then the paths and their access are as documented: only /drain/wait is public", (t) => {
  // Given / when
  const { routes } = setup();
  // Then
  t.deepEqual([...routes].map(([k, r]) => `${k} ${r.access}`).sort(), [
    "GET /drain local",
    "GET /drain/prestop local",
    "GET /drain/wait public",
    "POST /drain local",
    "POST /quitquitquit local",
  ].sort());
  t.deepEqual(DRAIN_PATHS, { status: "/drain", prestop: "/drain/prestop", wait: "/drain/wait", quit: "/quitquitquit" });
});

test("drain routes › given a serving sidecar, then GET /drain answers not draining, uncached, and starts nothing", async (t) => {
  // Given / when
  const { call, calls } = setup();
  const r = await call("GET", "/drain");
  // Then
  t.deepEqual(r, { status: 200, headers: JSON_NO_STORE, body: { draining: false, since: null, deadline: null } });
  t.deepEqual(calls, []);
});

test("drain routes › given POST /drain, then 202 with the drain's times; with ?mode=forever it drains forever; a bad mode is 400", async (t) => {
  // Given / when: a plain POST
  const a = setup();
  t.deepEqual(await a.call("POST", "/drain"), { status: 202, headers: JSON_NO_STORE, body: DRAINING });
  t.deepEqual(a.calls, ["start admin POST /drain"]);
  // mode=drain is the same
  const b = setup();
  t.is((await b.call("POST", "/drain", "mode=drain")).status, 202);
  t.deepEqual(b.calls, ["start admin POST /drain"]);
  // mode=forever drains forever
  const c = setup();
  t.deepEqual(await c.call("POST", "/drain", "mode=forever"), { status: 202, headers: JSON_NO_STORE, body: { draining: true, since: "1970-01-01T00:00:00.000Z", deadline: null } });
  t.deepEqual(c.calls, ["forever admin POST /drain"]);
  // and another mode is refused, naming it, with nothing started
  const d = setup();
  const bad = await d.call("POST", "/drain", "mode=soon");
  t.deepEqual(bad, { status: 400, headers: { "content-type": "application/json" }, body: { error: 'mode must be "drain" or "forever", not "soon"' } });
  t.deepEqual(d.calls, []);
});

test("drain routes › given POST /drain?wait (empty, true or 1), then it answers 200 with connection close once drained; other values do not wait", async (t) => {
  for (const wait of ["wait", "wait=true", "wait=1"]) {
    // Given a drain that is not over yet
    const s = setup();
    let answered = false;
    const reply = s.call("POST", "/drain", wait).then((r) => ((answered = true), r));
    await new Promise((r) => setTimeout(r, 20));
    t.false(answered, `${wait}: answered before the drain was over`);
    // When it is over
    s.markDrained();
    // Then
    t.deepEqual(await reply, { status: 200, headers: { ...JSON_NO_STORE, connection: "close" }, body: DRAINING }, wait);
  }
  for (const wait of ["wait=false", "wait=0", "wait=yes"]) t.is((await setup().call("POST", "/drain", wait)).status, 202, wait);
});

test("drain routes › given GET /drain/prestop, then it always waits: answered when drained, or when the hook's connection closes", async (t) => {
  // Given / when: drained
  const s = setup();
  const reply = s.call("GET", "/drain/prestop");
  s.markDrained();
  t.deepEqual(await reply, { status: 200, headers: { ...JSON_NO_STORE, connection: "close" }, body: DRAINING });
  t.deepEqual(s.calls, ["start admin GET /drain/prestop"]);
  // or the caller went away
  const g = setup();
  const gone = g.call("GET", "/drain/prestop");
  g.closeRequest();
  t.is((await gone).status, 200);
});

test("drain routes › given POST /quitquitquit, then 202 quitting with connection close, and the drain is told to quit", async (t) => {
  // Given / when
  const { call, calls } = setup();
  // Then
  t.deepEqual(await call("POST", "/quitquitquit"), { status: 202, headers: { ...JSON_NO_STORE, connection: "close" }, body: { quitting: true } });
  t.deepEqual(calls, ["quit admin POST /quitquitquit"]);
});

test("drain routes › given GET /drain/wait, then 200 drained, 504 at the bound, 504 when the caller leaves; it starts nothing", async (t) => {
  // Given a drain that completes
  const a = setup();
  const done = a.call("GET", "/drain/wait");
  a.markDrained();
  t.deepEqual(await done, { status: 200, headers: { ...JSON_NO_STORE, connection: "close" }, body: { drained: true } });
  t.deepEqual(a.calls, []);
  // one that does not within the bound
  const started = Date.now();
  t.deepEqual(await setup(50).call("GET", "/drain/wait"), { status: 504, headers: { ...JSON_NO_STORE, connection: "close" }, body: { drained: false } });
  t.true(Date.now() - started < 2000);
  // and a caller that leaves first
  const c = setup();
  const left = c.call("GET", "/drain/wait");
  c.closeRequest();
  t.deepEqual((await left).body, { drained: false });
});
