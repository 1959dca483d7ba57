// The decision recorder as the sidecar builds it from its flags (extproc/decision-log/recorder.ts): when it is off,
// what reaches the file and the push, the dataplane named in records, write failures warned once a minute, metrics.
import test, { type ExecutionContext } from "ava";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { Registry } from "prom-client";
import { loadSidecarConfig } from "../../extproc/config/sidecar.js";
import type { Decision, RequestFacts } from "../../extproc/decision.js";
import { startDecisionLog } from "../../extproc/decision-log/recorder.js";
import { createLogger, silentLogger } from "../../extproc/log.js";
import { pollUntil } from "../helpers/poll-until.js";

const facts = (requestId: string): RequestFacts => ({ direction: "inbound", method: "GET", path: "/p", authority: "a", scheme: "http", headers: new Map([["x-team", "blue"]]), peerUriSans: [], requestId });
const allow: Decision = { type: "continue", explain: { action: "allow", kind: "none", reason: "r" } };
const deny: Decision = { type: "respond", status: 403, body: "", headers: [], explain: { action: "deny", kind: "none", reason: "r" } };

function tempDir(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), "meshext-recorder-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const lines = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : []);
const metricValue = async (registry: Registry, name: string, reason?: string) =>
  ((await registry.getSingleMetric(name)?.get())?.values ?? []).filter((v) => reason === undefined || v.labels.reason === reason).reduce((n, v) => n + v.value, 0);

/** A control plane stand-in: the bodies and authorization headers of the POSTs it got. */
async function standIn(t: ExecutionContext): Promise<{ url: string; posts: Array<{ url: string; auth?: string; records: Array<Record<string, unknown>> }> }> {
  const posts: Array<{ url: string; auth?: string; records: Array<Record<string, unknown>> }> = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (c: string) => (body += c));
    req.on("end", () => {
      posts.push({ url: req.url!, auth: req.headers.authorization, records: (JSON.parse(body) as { records: Array<Record<string, unknown>> }).records });
      res.writeHead(202).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, posts };
}

test("recorder › given neither --decision-log nor --decision-log-push (or push with no control plane to send to), then there is no recorder", async (t) => {
  t.is(await startDecisionLog(loadSidecarConfig([], {}).config, new Registry(), silentLogger()), undefined);
  const pushOnly = { ...loadSidecarConfig([], {}).config, decisionLogPush: true, controlPlane: "" };
  t.is(await startDecisionLog(pushOnly, new Registry(), silentLogger()), undefined);
});

test("recorder › given a file, when decisions are recorded after setDataplane, then each line names the dataplane and the listed headers", async (t) => {
  const file = join(tempDir(t), "d.log");
  const registry = new Registry();
  const recorder = (await startDecisionLog(loadSidecarConfig(["--decision-log", file, "--decision-log-headers", "X-Team"], {}).config, registry, silentLogger(), Math.random, () => 0))!;
  recorder.record(facts("before"), allow, 1);
  recorder.setDataplane(() => ({ mesh: "default", name: "backend-1" }));
  recorder.record(facts("after"), deny, 1);
  await recorder.close();
  t.deepEqual(lines(file).map((l) => [l.requestId, l.dataplane, l.mesh, l.outcome, l.headers]), [
    ["before", undefined, undefined, "allow", { "x-team": "blue" }],
    ["after", "backend-1", "default", "deny", { "x-team": "blue" }],
  ]);
  t.is(await metricValue(registry, "meshext_decision_log_lines_total"), 2);
  // Every drop reason is on /metrics from the start, at 0
  t.regex(await registry.metrics(), /meshext_decision_log_dropped_total\{reason="buffer_full"\} 0[\s\S]*reason="write_error"\} 0[\s\S]*reason="format_error"\} 0/);
});

test("recorder › given push only (no file), when records are sampled out, then a record whose audit throws is never built and nothing is counted format_error", async (t) => {
  const cp = await standIn(t);
  const registry = new Registry();
  const config = loadSidecarConfig(["--control-plane", cp.url, "--decision-log-push", "--decision-log-push-max-records", "1", "--control-plane-token", "tok"], {}).config;
  // Given a random source that samples the second record out of the push's reservoir of one
  const recorder = (await startDecisionLog(config, registry, silentLogger(), () => 0.99))!;
  recorder.setDataplane(() => ({ mesh: "default", name: "backend-1" }));
  recorder.record(facts("kept"), allow, 1);
  const throwing: Decision = { ...allow, audit: () => { throw new Error("boom"); } };
  recorder.record(facts("sampled-out"), throwing, 1);
  // Then the sampled-out one cost nothing: no format_error; it is counted sampled_out
  t.is(await metricValue(registry, "meshext_decision_log_dropped_total", "format_error"), 0);
  t.is(await metricValue(registry, "meshext_decision_log_push_dropped_total", "sampled_out"), 1);
  await recorder.close();
  t.deepEqual(cp.posts, [], "close lets the unsent sample go");
});

test("recorder › given push on, when its interval passes, then the kept records go to the control plane with its token, naming the dataplane", async (t) => {
  const cp = await standIn(t);
  const registry = new Registry();
  const config = loadSidecarConfig(["--control-plane", cp.url, "--decision-log-push", "--decision-log-push-interval", "100ms", "--control-plane-token", "tok"], {}).config;
  const recorder = (await startDecisionLog(config, registry, silentLogger()))!;
  t.teardown(() => recorder.close());
  recorder.setDataplane(() => ({ mesh: "m1", name: "dp-1" }));
  recorder.record(facts("a"), deny, 1);
  const deadline = Date.now() + 5000;
  while (cp.posts.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.is(cp.posts.length, 1);
  t.is(cp.posts[0]!.url, "/meshes/m1/dataplanes/dp-1/_decision-samples");
  t.is(cp.posts[0]!.auth, "Bearer tok");
  t.like(cp.posts[0]!.records[0], { requestId: "a", dataplane: "dp-1", mesh: "m1", outcome: "deny" });
  while ((await metricValue(registry, "meshext_decision_log_pushed_total")) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.is(await metricValue(registry, "meshext_decision_log_pushed_total"), 1);
});

test("recorder › given a file whose writes fail (/dev/full), then the lines are counted write_error and the warning comes once a minute", async (t) => {
  if (!existsSync("/dev/full")) return void t.pass("no /dev/full");
  const registry = new Registry();
  const logged: Array<Record<string, unknown>> = [];
  const sink = new Writable({ write(chunk, _e, done) { for (const l of String(chunk).split("\n").filter(Boolean)) logged.push(JSON.parse(l)); done(); } });
  let now = 0;
  const recorder = (await startDecisionLog(loadSidecarConfig(["--decision-log", "/dev/full"], {}).config, registry, createLogger("info", sink), Math.random, () => now))!;
  // When a line fails at 0 s, 59.999 s and 60 s
  // (each write's failure is awaited before the clock moves: the warning reads the clock when the write fails)
  for (const [i, at] of [0, 59_999, 60_000].entries()) {
    now = at;
    recorder.record(facts(String(at)), deny, 1);
    await pollUntil(`write ${i + 1} to fail`, () => metricValue(registry, "meshext_decision_log_dropped_total", "write_error"), (n) => n === i + 1);
  }
  await recorder.close();
  // Then all three are write_error, and the warning was logged at 0 s and 60 s only
  t.is(await metricValue(registry, "meshext_decision_log_dropped_total", "write_error"), 3);
  t.is(logged.length, 2);
  t.like(logged[0], { level: 40, target: "/dev/full", msg: "decision log write failed; lines dropped (meshext_decision_log_dropped_total)" });
  t.regex(String(logged[0]!.err), /ENOSPC|no space/i);
});

test("recorder › given the file and the push on, then /metrics has every decision-log metric with a help text, and every drop reason at 0", async (t) => {
  const cp = await standIn(t);
  const registry = new Registry();
  const config = loadSidecarConfig(["--decision-log", join(tempDir(t), "d.log"), "--control-plane", cp.url, "--decision-log-push"], {}).config;
  const recorder = (await startDecisionLog(config, registry, silentLogger()))!;
  t.teardown(() => recorder.close());
  const text = await registry.metrics();
  const names = ["meshext_decision_log_lines_total", "meshext_decision_log_dropped_total", "meshext_decision_log_rotations_total", "meshext_decision_log_pushed_total", "meshext_decision_log_push_dropped_total"];
  for (const name of names) t.regex(text, new RegExp(`^# HELP ${name} \\S.{10,}$`, "m"), name);
  for (const reason of ["buffer_full", "write_error", "format_error"]) t.regex(text, new RegExp(`^meshext_decision_log_dropped_total\\{reason="${reason}"\\} 0$`, "m"), reason);
  for (const reason of ["sampled_out", "too_large", "refused", "send_error"]) t.regex(text, new RegExp(`^meshext_decision_log_push_dropped_total\\{reason="${reason}"\\} 0$`, "m"), reason);
});

test("recorder › given --decision-log-query, then the recorded path keeps its query string", async (t) => {
  const file = join(tempDir(t), "d.log");
  const recorder = (await startDecisionLog(loadSidecarConfig(["--decision-log", file, "--decision-log-query"], {}).config, new Registry(), silentLogger()))!;
  recorder.record({ ...facts("q"), path: "/p?a=1" }, allow, 1);
  await recorder.close();
  t.is(lines(file)[0]!.path, "/p?a=1");
});

test("recorder › given push on, when the recorder is closed before its interval, then the sample is let go: nothing is sent later", async (t) => {
  const cp = await standIn(t);
  const config = loadSidecarConfig(["--control-plane", cp.url, "--decision-log-push", "--decision-log-push-interval", "100ms"], {}).config;
  const recorder = (await startDecisionLog(config, new Registry(), silentLogger()))!;
  recorder.setDataplane(() => ({ mesh: "default", name: "backend-1" }));
  recorder.record(facts("a"), deny, 1);
  await recorder.close();
  await new Promise((r) => setTimeout(r, 350));
  t.deepEqual(cp.posts, []);
});

test("recorder › given --control-plane without --decision-log-push, then nothing is pushed and no push metric exists", async (t) => {
  const cp = await standIn(t);
  const registry = new Registry();
  const config = loadSidecarConfig(["--decision-log", join(tempDir(t), "d.log"), "--control-plane", cp.url, "--decision-log-push-interval", "100ms"], {}).config;
  const recorder = (await startDecisionLog(config, registry, silentLogger()))!;
  recorder.setDataplane(() => ({ mesh: "default", name: "backend-1" }));
  recorder.record(facts("a"), deny, 1);
  await new Promise((r) => setTimeout(r, 300));
  await recorder.close();
  t.deepEqual(cp.posts, []);
  t.is(registry.getSingleMetric("meshext_decision_log_pushed_total"), undefined);
});

test("recorder › given a config with no query or token setting at all, then paths lose their query string and pushes carry no token", async (t) => {
  const cp = await standIn(t);
  const file = join(tempDir(t), "d.log");
  const { decisionLogQuery: _q, controlPlaneToken: _t, ...config } = loadSidecarConfig(["--decision-log", file, "--control-plane", cp.url, "--decision-log-push", "--decision-log-push-interval", "100ms"], {}).config;
  const recorder = (await startDecisionLog(config, new Registry(), silentLogger()))!;
  t.teardown(() => recorder.close());
  recorder.setDataplane(() => ({ mesh: "default", name: "backend-1" }));
  recorder.record({ ...facts("q"), path: "/p?token=s3cr3t" }, deny, 1);
  const deadline = Date.now() + 5000;
  while (cp.posts.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.is(cp.posts[0]!.auth, undefined);
  t.is(cp.posts[0]!.records[0]!.path, "/p");
});

test("recorder › given push on, when intervals pass before the dataplane is known, then the records wait and go once it is", async (t) => {
  const cp = await standIn(t);
  const config = loadSidecarConfig(["--control-plane", cp.url, "--decision-log-push", "--decision-log-push-interval", "100ms"], {}).config;
  const recorder = (await startDecisionLog(config, new Registry(), silentLogger()))!;
  t.teardown(() => recorder.close());
  recorder.record(facts("early"), deny, 1);
  await new Promise((r) => setTimeout(r, 350));
  t.deepEqual(cp.posts, []);
  recorder.setDataplane(() => ({ mesh: "default", name: "backend-1" }));
  const deadline = Date.now() + 5000;
  while (cp.posts.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.is(cp.posts[0]?.records[0]?.requestId, "early");
});

test("recorder › given a burst of records in one go, then no file passes --decision-log-max-bytes and a write is at most 64 KiB", async (t) => {
  // Given a 4 KiB limit (one file) and a 100 000-byte one (another), each fed a burst far larger in the same tick
  const dir = tempDir(t);
  const burst = async (maxBytes: number, count: number) => {
    const file = join(dir, `d-${maxBytes}.log`);
    const recorder = (await startDecisionLog(loadSidecarConfig(["--decision-log", file, "--decision-log-max-bytes", String(maxBytes), "--decision-log-max-files", "9"], {}).config, new Registry(), silentLogger()))!;
    for (let i = 0; i < count; i++) recorder.record({ ...facts(`r${i}`), path: "/" + "p".repeat(400) }, deny, 1);
    await recorder.close();
    return file;
  };
  const small = await burst(4096, 40);
  for (const f of [small, `${small}.1`, `${small}.2`]) t.true(existsSync(f) && readFileSync(f).length <= 4096, f);
  // Then with the larger limit the first file was rotated after one 64 KiB write: the next chunk would not fit
  const large = await burst(100_000, 400);
  const first = readFileSync(`${large}.2`).length;
  t.true(first <= 64 * 1024 && first > 60 * 1024, `first file ${first} bytes`);
});
