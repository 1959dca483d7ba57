// The decision log as the sidecar uses it: built from the --decision-log* flags, fed one call per
// decision by the ext_proc stream, writing through a BufferedLineWriter (never blocks; drops counted) and, with
// --decision-log-push, offering each record to the sample sent to the control plane (push.ts).
import type { Registry } from "prom-client";
import { ConfigError } from "../config/flags.js";
import { decisionLogHeaderNames, type SidecarConfig } from "../config/sidecar.js";
import type { Decision, RequestFacts } from "../decision.js";
import type { Logger } from "../log.js";
import { DecisionLogMetrics, PushMetrics } from "./metrics.js";
import { DecisionSamplePusher } from "./push.js";
import { decisionRecord, shouldWrite } from "./record.js";
import { BufferedLineWriter, RotatingFileSink, StdoutSink, type LineSink } from "./writer.js";

export interface DecisionRecorder {
  /** Called on the request path once per decision: samples, formats and queues; never waits. */
  record(facts: RequestFacts, decision: Decision, latencyMs: number): void;
  /** Names the dataplane in every later record (the sidecar calls it once its policy engine exists). */
  setDataplane(get: () => { mesh: string; name: string }): void;
  /** Writes what is queued and closes the file. */
  close(): Promise<void>;
}

type DecisionLogConfig = Pick<SidecarConfig, "decisionLog" | "decisionLogSample" | "decisionLogHeaders" | "decisionLogMaxBytes" | "decisionLogMaxFiles" | "decisionLogBufferBytes"> &
  Partial<Pick<SidecarConfig, "decisionLogQuery" | "decisionLogPush" | "decisionLogPushMaxRecords" | "decisionLogPushIntervalMs" | "decisionLogPushBatchBytes" | "controlPlane" | "controlPlaneToken">>;

/** Undefined when --decision-log is empty and --decision-log-push is off; throws ConfigError when the file cannot be opened. */
export async function startDecisionLog(config: DecisionLogConfig, registry: Registry, log: Logger, random: () => number = Math.random, nowMs: () => number = Date.now): Promise<DecisionRecorder | undefined> {
  const push = config.decisionLogPush === true && Boolean(config.controlPlane);
  if (!config.decisionLog && !push) return undefined;
  const writer = config.decisionLog ? await startWriter(config, registry, log, nowMs) : undefined;
  const metrics = writer?.metrics ?? new DecisionLogMetrics(registry);
  const headers = decisionLogHeaderNames(config);
  const sample = config.decisionLogSample;
  const withQuery = config.decisionLogQuery ?? false;
  let dataplane: (() => { mesh: string; name: string }) | undefined;
  const pusher = push
    ? new DecisionSamplePusher({
        baseUrl: config.controlPlane!,
        token: config.controlPlaneToken ?? "",
        maxRecords: config.decisionLogPushMaxRecords!,
        intervalMs: config.decisionLogPushIntervalMs!,
        batchBytes: config.decisionLogPushBatchBytes!,
        dataplane: () => dataplane?.(),
        metrics: new PushMetrics(registry),
        log,
        random,
        nowMs,
      })
    : undefined;
  pusher?.start();
  return {
    setDataplane(get) {
      dataplane = get;
    },
    record(facts, decision, latencyMs) {
      // On the request path: whatever goes wrong here is counted, never thrown into the stream handler.
      try {
        if (!shouldWrite(decision, sample, random)) return;
        const slot = pusher ? pusher.slot() : -1;
        if (!writer && slot < 0) return;
        const line = JSON.stringify(decisionRecord(facts, decision, latencyMs, nowMs(), headers, withQuery, dataplane?.()));
        writer?.lines.push(line);
        if (slot >= 0) pusher!.fill(slot, line);
      } catch {
        metrics.dropped.inc({ reason: "format_error" });
      }
    },
    async close() {
      await pusher?.stop();
      await writer?.lines.close();
    },
  };
}

/** The --decision-log file or stdout, behind its bounded writer. */
async function startWriter(config: DecisionLogConfig, registry: Registry, log: Logger, nowMs: () => number): Promise<{ lines: BufferedLineWriter; metrics: DecisionLogMetrics }> {
  const metrics = new DecisionLogMetrics(registry);
  const toStdout = config.decisionLog === "stdout";
  const sink: LineSink = toStdout ? new StdoutSink() : new RotatingFileSink(config.decisionLog, config.decisionLogMaxBytes, config.decisionLogMaxFiles, () => metrics.rotations.inc());
  // A path that cannot be opened is bad configuration: the sidecar exits non-zero with this message.
  await sink.open().catch((err: Error) => {
    throw new ConfigError(err.message);
  });
  let lastErrorLogMs = -Infinity;
  const lines = new BufferedLineWriter(sink, {
    bufferBytes: config.decisionLogBufferBytes,
    chunkBytes: Math.min(toStdout ? StdoutSink.CHUNK_BYTES : RotatingFileSink.CHUNK_BYTES, config.decisionLogMaxBytes),
    onWritten: (n) => metrics.lines.inc(n),
    onDropped: (reason, n) => metrics.dropped.inc({ reason }, n),
    onError: (err) => {
      // One warning a minute at most: a full disk must not flood the process log too.
      if (nowMs() - lastErrorLogMs < 60_000) return;
      lastErrorLogMs = nowMs();
      log.warn({ err: err.message, target: config.decisionLog }, "decision log write failed; lines dropped (meshext_decision_log_dropped_total)");
    },
  });
  return { lines, metrics };
}
