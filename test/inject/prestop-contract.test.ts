// The preStop hook injection renders must hit a sidecar route that starts the drain and waits,
// checked against the sidecar's real drain routes (a GET, as kubelet's httpGet hooks send).
import test from "ava";
import type { AdminHandler } from "../../extproc/admin/server.js";
import { registerDrainRoutes } from "../../extproc/drain/routes.js";
import { PRESTOP_DRAIN_PATH, renderSidecar } from "../../extproc/inject/render.js";
import { settings } from "./helpers.js";

test("inject › the rendered preStop httpGet starts the sidecar's drain and answers once drained", async (t) => {
  const routes = new Map<string, AdminHandler>();
  const calls: string[] = [];
  let finish!: () => void;
  const drained = new Promise<void>((resolve) => (finish = resolve));
  registerDrainRoutes(
    { route: (method: string, path: string, handler: AdminHandler) => void routes.set(`${method} ${path}`, handler) },
    { snapshot: () => ({ phase: "draining" }) as never, start: async (trigger: string) => void calls.push(trigger), drained } as never,
  );
  const hook = (renderSidecar(settings()).sidecar.lifecycle as { preStop: { httpGet: { path: string } } }).preStop.httpGet;
  t.is(hook.path, PRESTOP_DRAIN_PATH);
  const url = new URL(hook.path, "http://pod");
  const handler = routes.get(`GET ${url.pathname}`);
  if (!handler) return t.fail(`the sidecar has no GET ${url.pathname}`);
  let answered = false;
  const reply = Promise.resolve(
    handler({ method: "GET", path: url.pathname, query: url.searchParams, headers: {}, body: Buffer.alloc(0), closed: new Promise(() => {}) }),
  ).then((r) => ((answered = true), r));
  await new Promise((r) => setImmediate(r));
  t.is(calls.length, 1, "the drain started");
  t.false(answered, "the hook waits for the drain");
  finish();
  t.is((await reply).status, 200);
});
