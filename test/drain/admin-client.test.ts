// `meshext drain` and `meshext wait-ready` as hooks and probes run them: exit codes and messages
// against a real sidecar admin, a not-ready one, and nothing listening.
import test from "ava";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { FakeEnvoyAdmin } from "../helpers/fake-envoy-admin.js";
import { spawnSync } from "node:child_process";
import { CLI_PATH, spawnMeshext } from "./meshext-process.js";

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

/** A loopback port nothing listens on (bound, then released). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

test("admin client › drain with nothing listening exits 1 naming the URL and the cause", async (t) => {
  const port = await deadPort();
  const r = await run(["drain", "--admin", `http://127.0.0.1:${port}`, "--timeout", "2s"]);
  t.is(r.code, 1);
  t.regex(r.stderr, new RegExp(`meshext drain: POST http://127\\.0\\.0\\.1:${port}/drain\\?wait=true: connection refused \\(nothing listens there\\) \\[ECONNREFUSED\\]`));
  t.notRegex(r.stderr, /fetch failed/);
});

test("admin client › wait-ready with nothing listening names each URL and the cause, not \"fetch failed\"", async (t) => {
  // Given neither the sidecar nor Envoy listening; when wait-ready checks once
  const [a, b] = [await deadPort(), await deadPort()];
  const r = await run(["wait-ready", "--timeout=0s", "--admin", `http://127.0.0.1:${a}`, "--envoy-admin", `http://127.0.0.1:${b}`]);
  // Then it exits 1 naming both URLs with why
  t.is(r.code, 1);
  t.true(r.stderr.includes(`http://127.0.0.1:${a}/ready: connection refused (nothing listens there) [ECONNREFUSED]`), r.stderr);
  t.true(r.stderr.includes(`http://127.0.0.1:${b}/ready: connection refused`), r.stderr);
  t.notRegex(r.stderr, /fetch failed/);
});

test("admin client › drain against an admin that never answers says it got no answer within the timeout", async (t) => {
  // Given an admin port that accepts and never answers
  const s = createServer(() => {});
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    s.closeAllConnections();
    s.close();
  });
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  // When drain waits 500 ms; then the error names the URL and the timeout
  const r = await run(["drain", "--admin", url, "--timeout", "500ms"]);
  t.is(r.code, 1);
  t.true(r.stderr.includes(`POST ${url}/drain?wait=true: no answer within 500ms`), r.stderr);
});

test("admin client › drain --help and wait-ready --help list only their own flags", async (t) => {
  const help = async (command: string) => {
    const out = spawnSync(process.execPath, [CLI_PATH, command, "--help"], { encoding: "utf8" }).stdout;
    return [...out.matchAll(/^ {2}(?:-h, )?--([a-z-]+)/gm)].map((m) => m[1]).sort();
  };
  t.deepEqual(await help("drain"), ["admin", "admin-token", "forever", "help", "timeout"]);
  t.deepEqual(await help("wait-ready"), ["admin", "admin-token", "envoy-admin", "help", "timeout"]);
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
