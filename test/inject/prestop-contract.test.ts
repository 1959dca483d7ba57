// The hooks injection renders must match the sidecar's real admin routes and commands: the classic
// Envoy preStop (an httpGet, which reaches the pod IP) hits a public route that starts nothing and
// answers once drained; every hook that changes state is an exec of a real `meshext` subcommand.
import test from "ava";
import type { AdminAccess } from "../../extproc/admin/access.js";
import type { AdminHandler } from "../../extproc/admin/server.js";
import { registerDrainRoutes } from "../../extproc/drain/routes.js";
import { renderSidecar } from "../../extproc/inject/render.js";
import { settings } from "./helpers.js";

type Obj = Record<string, any>;

function routesOf(drain: object) {
  const routes = new Map<string, { handler: AdminHandler; access: AdminAccess }>();
  registerDrainRoutes({ route: (method, path, handler, access = "local") => void routes.set(`${method} ${path}`, { handler, access }) }, drain as never, 60_000);
  return routes;
}

test("inject › classic: Envoy's preStop httpGet is public, starts nothing, and answers once the drain completes", async (t) => {
  const calls: string[] = [];
  let finish!: () => void;
  const drained = new Promise<void>((resolve) => (finish = resolve));
  const routes = routesOf({ snapshot: () => ({ phase: "serving" }), start: async (x: string) => void calls.push(x), drainForever: async () => {}, quit: async () => {}, drained });
  const hook = (renderSidecar(settings(), "classic").envoy as Obj).lifecycle.preStop.httpGet;
  const url = new URL(hook.path, "http://pod");
  const route = routes.get(`GET ${url.pathname}`);
  if (!route) return t.fail(`the sidecar has no GET ${url.pathname}`);
  t.is(route.access, "public", "an httpGet hook comes from the pod IP, so the route must be public");
  let answered = false;
  const reply = Promise.resolve(
    route.handler({ method: "GET", path: url.pathname, query: url.searchParams, headers: {}, body: Buffer.alloc(0), closed: new Promise(() => {}) }),
  ).then((r) => ((answered = true), r));
  await new Promise((r) => setImmediate(r));
  t.deepEqual(calls, [], "a public route starts no drain");
  t.false(answered, "the hook waits for the drain");
  finish();
  t.is((await reply).status, 200);
});

test("inject › every other hook and probe that is not a read-only httpGet is an exec of a meshext subcommand", (t) => {
  const s = settings();
  for (const mode of ["classic", "native"] as const) {
    const r = renderSidecar(s, mode);
    for (const c of [r.envoy, r.sidecar] as Obj[]) {
      const handlers = [c.lifecycle?.preStop, c.lifecycle?.postStart, c.startupProbe].filter(Boolean);
      for (const h of handlers) {
        if (h.httpGet) {
          t.true(routesOf({ drained: new Promise(() => {}) }).get(`GET ${h.httpGet.path}`)?.access === "public", `${mode} ${c.name}: httpGet ${h.httpGet.path} must be public`);
          continue;
        }
        t.deepEqual(h.exec.command.slice(0, s.sidecarExec.length), s.sidecarExec, `${mode} ${c.name}`);
        t.true(["drain", "wait-ready"].includes(h.exec.command[s.sidecarExec.length]), `${mode} ${c.name}: ${h.exec.command.join(" ")}`);
      }
    }
  }
});
