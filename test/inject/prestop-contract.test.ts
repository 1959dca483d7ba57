// The hooks injection renders must match the sidecar's real admin routes and commands: every hook that
// changes state is an exec of a real `meshext` subcommand, and none needs the pod IP.
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

test("inject › one container: Envoy is the sidecar's child, so no hook reaches the pod IP (every hook is an exec on loopback)", (t) => {
  for (const mode of ["classic", "native"] as const) {
    const r = renderSidecar(settings(), mode) as unknown as Obj;
    t.is(r.envoy, undefined, "no separate Envoy container");
    const handlers = [r.sidecar.lifecycle?.preStop, r.sidecar.lifecycle?.postStart, r.sidecar.startupProbe].filter(Boolean);
    t.true(handlers.length >= 2, mode);
    for (const h of handlers) t.is(h.httpGet, undefined, `${mode}: ${JSON.stringify(h)}`);
  }
});

test("inject › every other hook and probe that is not a read-only httpGet is an exec of a meshext subcommand", (t) => {
  const s = settings();
  for (const mode of ["classic", "native"] as const) {
    const r = renderSidecar(s, mode);
    for (const c of [r.sidecar] as Obj[]) {
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
