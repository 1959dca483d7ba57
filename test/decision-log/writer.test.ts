// The decision log never makes the request path wait or throw: a stalled sink fills the bounded buffer, then lines
// are dropped and counted; when the sink recovers the queued lines go out whole and in order; stdout works too.
import test from "ava";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { loadSidecarConfig } from "../../extproc/config/sidecar.js";
import type { Decision, RequestFacts } from "../../extproc/decision.js";
import { startDecisionLog } from "../../extproc/decision-log/recorder.js";
import { silentLogger } from "../../extproc/log.js";
import { BufferedLineWriter, type LineSink } from "../../extproc/decision-log/writer.js";
import { spawnMeshext } from "../drain/meshext-process.js";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";

/** A sink whose writes hang until release() is called (a blocked pipe, a stalled disk). */
function stalledSink(): LineSink & { chunks: string[]; release(): void } {
  const chunks: string[] = [];
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  return {
    chunks,
    release,
    open: async () => {},
    write: async (chunk) => {
      await released;
      chunks.push(chunk.toString());
    },
    close: async () => {},
  };
}

test("decision log writer › a stalled sink never blocks push(): past the buffer, lines are dropped and counted; the rest arrive in order", async (t) => {
  // Given a writer with a 1 000-byte buffer in front of a sink that does not complete writes
  const sink = stalledSink();
  const dropped: string[] = [];
  let written = 0;
  const writer = new BufferedLineWriter(sink, { bufferBytes: 1000, chunkBytes: 4096, onWritten: (n) => (written += n), onDropped: (reason, n) => dropped.push(...Array(n).fill(reason)), onError: () => {} });
  // When 100 lines of 99 characters (+ newline) are pushed in one go
  const started = process.hrtime.bigint();
  const accepted = Array.from({ length: 100 }, (_, i) => writer.push(String(i).padStart(99, "x")));
  const tookMs = Number(process.hrtime.bigint() - started) / 1e6;
  // Then push returned at once each time; the first 10 fit, the other 90 were dropped as buffer_full
  t.true(tookMs < 50, `push took ${tookMs}ms`);
  t.is(accepted.filter(Boolean).length, 10);
  t.is(dropped.length, 90);
  t.true(dropped.every((r) => r === "buffer_full"));
  // And once the sink recovers, the queued lines are written whole and in order
  await new Promise((r) => setImmediate(r));
  sink.release();
  await writer.close();
  const lines = sink.chunks.join("").split("\n").filter(Boolean);
  t.deepEqual(lines.map((l) => Number(l.replace(/^x+/, ""))), [...Array(10).keys()]);
  t.is(written, 10);
});

test("decision log writer › a failing sink drops the lines as write_error and keeps accepting new ones", async (t) => {
  let fail = true;
  const got: string[] = [];
  const sink: LineSink = { open: async () => {}, close: async () => {}, write: async (c) => (fail ? Promise.reject(new Error("ENOSPC")) : void got.push(c.toString())) };
  const dropped: string[] = [];
  const errors: string[] = [];
  const writer = new BufferedLineWriter(sink, { bufferBytes: 10_000, chunkBytes: 4096, onWritten: () => {}, onDropped: (reason, n) => dropped.push(...Array(n).fill(reason)), onError: (e) => errors.push(e.message) });
  writer.push("a");
  writer.push("b");
  await new Promise((r) => setTimeout(r, 20));
  fail = false;
  writer.push("c");
  await writer.close();
  t.deepEqual(dropped, ["write_error", "write_error"]);
  t.deepEqual(errors, ["ENOSPC"]);
  t.deepEqual(got, ["c\n"]);
});

test("decision log › --decision-log stdout puts whole JSON lines on stdout beside the process log", async (t) => {
  // Given the real sidecar process writing its decision log to stdout
  const proc = spawnMeshext(["sidecar", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--decision-log", "stdout", "--before-first-sync", "deny", "--control-plane", "http://127.0.0.1:9", "--kuma-version", "2.14"]);
  t.teardown(() => proc.child.kill("SIGKILL"));
  const listening = await proc.waitForLine((l) => l.msg === "listening", 30_000);
  const envoy = new EnvoyExtProcClient(String(listening.grpc), { messageTimeoutMs: 5000 });
  t.teardown(() => envoy.close());
  // When requests arrive (no policies loaded, the control plane port is closed: each is a 503 not-ready denial)
  for (let i = 0; i < 3; i++) await envoy.request({ headers: [["x-request-id", `s${i}`]] });
  // Then each is one parseable line on stdout, next to the ordinary log lines
  const records = await proc.waitForLine((l) => (l as Record<string, unknown>).requestId === "s2" && "outcome" in l, 10_000).then(() => proc.lines.filter((l) => "outcome" in l));
  t.deepEqual(records.map((r) => [(r as Record<string, unknown>).requestId, (r as Record<string, unknown>).outcome]), [["s0", "not-ready"], ["s1", "not-ready"], ["s2", "not-ready"]]);
});

test("decision log › a record that cannot be built is counted as format_error and never thrown into the request path", async (t) => {
  // Given a recorder writing to a temp file
  const dir = mkdtempSync(join(tmpdir(), "meshext-decision-log-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const registry = new Registry();
  const { config } = loadSidecarConfig(["--decision-log", join(dir, "d.log")], {});
  const recorder = (await startDecisionLog(config, registry, silentLogger()))!;
  // When a decision's audit throws
  const facts: RequestFacts = { direction: "inbound", method: "GET", path: "/", authority: "a", scheme: "http", headers: new Map(), peerUriSans: [] };
  const decision: Decision = { type: "continue", explain: { action: "allow", kind: "none", reason: "r" }, audit: () => { throw new Error("boom"); } };
  // Then record() returns normally and the drop is counted
  t.notThrows(() => recorder.record(facts, decision, 0.1));
  await recorder.close();
  t.regex(await registry.metrics(), /meshext_decision_log_dropped_total\{reason="format_error"\} 1/);
});
