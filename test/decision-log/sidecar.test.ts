// The decision log of a real sidecar (in process, real gRPC): one JSON line per decision with who, what
// matched and why; denials always, allows sampled; only listed headers; a file that rotates; bad settings refused.
import test, { type ExecutionContext } from "ava";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../extproc/config/flags.js";
import { loadSidecarConfig } from "../../extproc/config/sidecar.js";
import { spawnMeshext } from "../drain/meshext-process.js";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";
import { startTestSidecar, type Harness } from "../helpers/sidecar-harness.js";
import { ROOT } from "../envoy/envoy-config.js";
import { which } from "../helpers/tools.js";

const WEB: [string, string] = ["x-kuma-tags", "&kuma.io/service=web&"];

/** A temp dir with the sample MeshTrafficPermission only (web allowed, everyone else denied) and a log path. */
function setup(t: ExecutionContext): { policies: string; logFile: string } {
  const dir = mkdtempSync(join(tmpdir(), "meshext-decision-log-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const policies = join(dir, "policies");
  mkdirSync(policies);
  copyFileSync(join(ROOT, "envoy", "policies", "traffic-permission.yaml"), join(policies, "traffic-permission.yaml"));
  return { policies, logFile: join(dir, "decisions.log") };
}

async function sidecarWith(t: ExecutionContext, args: string[]): Promise<{ harness: Harness; envoy: EnvoyExtProcClient }> {
  const harness = await startTestSidecar(["--trust-kuma-tags-header", "--dataplane-file", join(ROOT, "envoy", "dataplane.yaml"), ...args]);
  t.teardown(() => harness.stop());
  const envoy = new EnvoyExtProcClient(harness.grpcAddress, { messageTimeoutMs: 5000 });
  t.teardown(() => envoy.close());
  return { harness, envoy };
}

const readLines = (file: string): Array<Record<string, any>> =>
  existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];

async function until<T>(read: () => T, ok: (v: T) => boolean, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let v = read();
  while (!ok(v) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    v = read();
  }
  return v;
}

async function metric(harness: Harness, name: string): Promise<number> {
  const text = await (await fetch(`${harness.adminUrl}/metrics`)).text();
  return text.split("\n").filter((l) => l.startsWith(name)).reduce((sum, l) => sum + Number(l.split(" ").pop()), 0);
}

test("decision log › one JSON line per decision: identity and source, matched policies, outcome, reason, latency; only listed headers", async (t) => {
  // Given a sidecar logging every decision to a file, with x-team as the only header to log
  const { policies, logFile } = setup(t);
  const { harness, envoy } = await sidecarWith(t, ["--policies", policies, "--decision-log", logFile, "--decision-log-headers", "X-Team"]);

  // When `web` makes an allowed request and an anonymous client a denied one, both carrying a secret header
  const allowed = await envoy.request({ method: "GET", path: "/orders?id=1", headers: [WEB, ["x-request-id", "req-allow"], ["x-team", "blue"], ["authorization", "Bearer s3cret"]] });
  const denied = await envoy.request({ method: "POST", path: "/admin", headers: [["x-request-id", "req-deny"], ["authorization", "Bearer s3cret"]] });
  t.is(allowed.status, 200);
  t.is(denied.status, 403);

  // Then the file holds one line for each, in order, saying who, what matched, what happened and why
  const lines = await until(() => readLines(logFile), (l) => l.length >= 2);
  t.is(lines.length, 2, JSON.stringify(lines));
  const [allow, deny] = lines as [Record<string, any>, Record<string, any>];
  t.like(allow, { requestId: "req-allow", direction: "inbound", method: "GET", path: "/orders", outcome: "allow", kind: "MeshTrafficPermission", policy: "backend-allow-web", rule: "from[1]" });
  t.deepEqual(allow.client, { tags: "kuma.io/service=web", source: "x-kuma-tags" });
  t.deepEqual(allow.matched, ["MeshTrafficPermission/backend-allow-web from[0]", "MeshTrafficPermission/backend-allow-web from[1]"]);
  t.regex(allow.reason, /Allow/);
  t.true(typeof allow.latencyMs === "number" && allow.latencyMs >= 0 && allow.latencyMs < 1000);
  t.false(Number.isNaN(Date.parse(allow.time)));
  t.deepEqual(allow.headers, { "x-team": "blue" }, "only the listed header");
  t.like(deny, { requestId: "req-deny", method: "POST", path: "/admin", outcome: "deny", status: 403, policy: "backend-allow-web", rule: "from[0]" });
  t.deepEqual(deny.client, { tags: "", source: "none" });
  t.deepEqual(deny.headers, {}, "x-team was not sent");
  t.false(readFileSync(logFile, "utf8").includes("s3cret"), "unlisted headers never reach the log");
  t.is(await metric(harness, "meshext_decision_log_lines_total"), 2);
  // And the decision-log metrics pass promtool's lint
  const promtool = which("promtool");
  if (!promtool) return void t.log("promtool not installed (Debian package prometheus): skipped the metrics lint");
  const lint = spawnSync(promtool, ["check", "metrics"], { input: await (await fetch(`${harness.adminUrl}/metrics`)).text(), encoding: "utf8" });
  t.is(lint.status, 0, lint.stdout + lint.stderr);
});

test("decision log › with --decision-log-sample 0 denials are still written and allows are not", async (t) => {
  // Given sampling 0
  const { policies, logFile } = setup(t);
  const { envoy } = await sidecarWith(t, ["--policies", policies, "--decision-log", logFile, "--decision-log-sample", "0"]);
  // When five allowed and two denied requests pass
  for (let i = 0; i < 5; i++) t.is((await envoy.request({ headers: [WEB] })).status, 200);
  for (let i = 0; i < 2; i++) t.is((await envoy.request({ headers: [["x-request-id", `d${i}`]] })).status, 403);
  // Then only the two denials are logged
  const lines = await until(() => readLines(logFile), (l) => l.length >= 2);
  await new Promise((r) => setTimeout(r, 100));
  t.deepEqual(readLines(logFile).map((l) => l.outcome), ["deny", "deny"]);
  t.deepEqual(lines.map((l) => l.requestId), ["d0", "d1"]);
});

test("decision log › the file rotates at --decision-log-max-bytes and keeps --decision-log-max-files, losing no line", async (t) => {
  // Given a 4 KiB size limit and two rotated files kept
  const { policies, logFile } = setup(t);
  const { harness, envoy } = await sidecarWith(t, ["--policies", policies, "--decision-log", logFile, "--decision-log-max-bytes", "4096", "--decision-log-max-files", "2"]);
  // When 40 requests are decided (~300 bytes a line: about three files' worth)
  for (let i = 0; i < 40; i++) await envoy.request({ headers: [WEB, ["x-request-id", `r${i}`]] });
  await until(() => 0, () => false, 200);
  const rotations = await metric(harness, "meshext_decision_log_rotations_total");
  // Then PATH, PATH.1 and PATH.2 exist, none over the limit, no PATH.3, and the newest lines are intact and in order
  t.true(rotations >= 2, `rotations: ${rotations}`);
  for (const f of [logFile, `${logFile}.1`, `${logFile}.2`]) t.true(existsSync(f) && statSync(f).size <= 4096, f);
  t.false(existsSync(`${logFile}.3`));
  const kept = [...readLines(`${logFile}.2`), ...readLines(`${logFile}.1`), ...readLines(logFile)].map((l) => Number(String(l.requestId).slice(1)));
  t.is(kept[kept.length - 1], 39);
  t.deepEqual(kept, kept.map((_, i) => kept[0]! + i), "consecutive: nothing lost between files");
  t.is(await metric(harness, "meshext_decision_log_lines_total"), 40);
  t.is(await metric(harness, 'meshext_decision_log_dropped_total{reason="buffer_full"}'), 0);
});

test("decision log › bad settings are refused with a message naming the flag; an unwritable path stops the sidecar with exit 2", async (t) => {
  const load = (args: string[]) => () => loadSidecarConfig(args, {});
  t.throws(load(["--decision-log-sample", "1.5"]), { instanceOf: ConfigError, message: /--decision-log-sample: expected a number from 0 to 1/ });
  t.throws(load(["--decision-log-sample", "lots"]), { instanceOf: ConfigError, message: /--decision-log-sample/ });
  t.throws(load(["--decision-log-headers", "x-team,bad header"]), { instanceOf: ConfigError, message: /--decision-log-headers: "bad header" is not a header name/ });
  t.throws(load(["--decision-log-max-bytes", "100"]), { instanceOf: ConfigError, message: /--decision-log-max-bytes: must be at least 4096/ });
  t.is(loadSidecarConfig(["--decision-log-sample", "0.01"], {}).config.decisionLogSample, 0.01);

  const proc = spawnMeshext(["sidecar", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--decision-log", "/nonexistent-dir/decisions.log"]);
  t.is((await proc.exited).code, 2);
  t.regex(proc.stderr(), /--decision-log: cannot open \/nonexistent-dir\/decisions\.log/);
});
