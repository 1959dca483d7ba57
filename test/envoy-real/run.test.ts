// `meshext run` as a user starts it: Envoy on the generated bootstrap, "envoy started" only once Envoy is LIVE,
// SIGTERM drains the real Envoy and exits 0; a missing Envoy or a bootstrap Envoy rejects is one message and exit 2.
import test from "ava";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../control-plane/helpers.js";
import { startEchoApp } from "../helpers/envoy-stack.js";
import { freePort } from "../helpers/prometheus.js";
import { requireEnvoy } from "../helpers/real-envoy.js";

const CLI = join(process.cwd(), "dist", "extproc", "cli.js");
const POLICIES = join(process.cwd(), "envoy", "policies");

test("run › without an Envoy binary: one line naming how to get one, exit 2, nothing started", (t) => {
  const run = spawnSync(process.execPath, [CLI, "run", "--policies", POLICIES], { encoding: "utf8", env: { ...process.env, MESHEXT_ENVOY: "/nonexistent/envoy" } });
  t.is(run.status, 2);
  t.is(run.stderr.trim().split("\n").length, 1, run.stderr);
  t.regex(run.stderr, /MESHEXT_ENVOY=\/nonexistent\/envoy is not an executable file/);
  t.notRegex(run.stderr, /ENOENT|spawn/);
  const named = spawnSync(process.execPath, [CLI, "run", "--policies", POLICIES, "--", "no-such-envoy"], { encoding: "utf8" });
  t.is(named.status, 2);
  t.regex(named.stderr, /Envoy command not found: no-such-envoy/);
});

test("run › a bootstrap Envoy rejects exits 2 with Envoy's own reason", (t) => {
  const envoy = requireEnvoy(t);
  if (!envoy) return;
  // Given a wasm module path that is not a wasm module
  const dir = mkdtempSync(join(tmpdir(), "meshext-run-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "bad.wasm"), "not wasm");
  const run = spawnSync(process.execPath, [CLI, "run", "--policies", POLICIES, "--wasm-module", join(dir, "bad.wasm"), "--bootstrap-file", join(dir, "envoy.yaml")], {
    encoding: "utf8",
    env: { ...process.env, MESHEXT_ENVOY: envoy.path },
  });
  // Then Envoy's validation says why, and meshext exits 2 before listening
  t.is(run.status, 2, run.stderr);
  t.regex(run.stderr, /Envoy rejected the generated bootstrap .*envoy\.yaml:\n.*(wasm|Wasm)/);
  t.notRegex(run.stdout, /"msg":"listening"/);
});

test("run › Envoy starts on the generated bootstrap, is logged as started once LIVE, and SIGTERM drains it and exits 0", async (t) => {
  const envoy = requireEnvoy(t);
  if (!envoy) return;
  const app = await startEchoApp();
  t.teardown(() => app.close());
  const [inbound, admin] = [await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    [CLI, "run", "--policies", POLICIES, "--dataplane-tags", "kuma.io/service=backend", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--inbound-listen-host", "127.0.0.1",
      "--inbound-port", String(inbound), "--app-port", String(app.port), "--envoy-admin-listen", `127.0.0.1:${admin}`, "--envoy-stats-listen", "", "--drain-min", "0", "--drain-time", "5s"],
    { env: { ...process.env, MESHEXT_ENVOY: envoy.path }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  t.teardown(() => void child.kill("SIGKILL"));
  // When "envoy started" is logged, then Envoy already answers LIVE and serves the inbound
  t.true(await eventually(() => out.includes('"msg":"envoy started"'), 30_000, 50), out);
  t.is((await fetch(`http://127.0.0.1:${admin}/ready`)).status, 200);
  const res = await fetch(`http://127.0.0.1:${inbound}/`);
  await res.text();
  t.is(res.headers.get("server"), "envoy");
  // When SIGTERM arrives, then the drain fails Envoy's health check, stops it, and run exits 0
  child.kill("SIGTERM");
  t.is(await exited, 0, out);
  t.regex(out, /"step":"envoy_healthcheck_fail","outcome":"ok"/);
  t.regex(out, /"step":"stop_envoy","outcome":"ok"/);
});
