// `meshext drain` and `meshext wait-ready` as hooks and probes run them: exit codes and messages
// against a real sidecar admin, a not-ready one, and nothing listening.
import test from "ava";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { FakeEnvoyAdmin } from "../helpers/fake-envoy-admin.js";
import { spawnMeshext } from "./meshext-process.js";

async function run(args: string[]) {
  const p = spawnMeshext(args);
  const exit = await p.exited;
  return { code: exit.code, stderr: p.stderr() };
}

async function server(status: number) {
  const s = createServer((_req, res) => res.writeHead(status).end(status === 200 ? "ok" : "not ready"));
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, close: () => new Promise((r) => s.close(r)) };
}

test("admin client › drain with nothing listening exits 1 naming the URL", async (t) => {
  const r = await run(["drain", "--admin", "http://127.0.0.1:1", "--timeout", "2s"]);
  t.is(r.code, 1);
  t.regex(r.stderr, /meshext drain: http:\/\/127\.0\.0\.1:1\/drain\?wait=true: /);
});

test("admin client › wait-ready --timeout=0s checks once: not ready → exit 1 with the reason; both ready → exit 0", async (t) => {
  const envoy = await FakeEnvoyAdmin.start();
  t.teardown(() => envoy.close());
  const notReady = await server(503);
  t.teardown(() => notReady.close());
  const bad = await run(["wait-ready", "--timeout=0s", "--admin", notReady.url, "--envoy-admin", envoy.url]);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /\/ready answered 503: not ready/);
  const ready = await server(200);
  t.teardown(() => ready.close());
  t.is((await run(["wait-ready", "--timeout=0s", "--admin", ready.url, "--envoy-admin", envoy.url])).code, 0);
  // Envoy draining (after /healthcheck/fail) is not ready either
  await fetch(`${envoy.url}/healthcheck/fail`, { method: "POST" });
  const draining = await run(["wait-ready", "--timeout=0s", "--admin", ready.url, "--envoy-admin", envoy.url]);
  t.is(draining.code, 1);
  t.regex(draining.stderr, /answered 503: DRAINING/);
});

test("admin client › wait-ready waits until ready, up to its timeout", async (t) => {
  let status = 503;
  const s = createServer((_req, res) => res.writeHead(status).end());
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  t.teardown(() => void s.close());
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  setTimeout(() => (status = 200), 600);
  const r = await run(["wait-ready", "--timeout=20s", "--admin", url, "--envoy-admin="]);
  t.is(r.code, 0, r.stderr);
});
