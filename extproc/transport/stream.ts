// The ExternalProcessor/Process handler: one RequestProcessor per gRPC stream; performs its
// Steps (replies, delays, OK close), ends the call on Envoy's half-close, and treats a cancel as
// a normal end. A bad message fails only its own stream with INVALID_ARGUMENT.
import { status as GrpcStatus, type ServerDuplexStream } from "@grpc/grpc-js";
import type { Decider, Direction } from "../decision.js";
import type { DecisionRecorder } from "../decision-log/recorder.js";
import type { ProcessingRequest, ProcessingResponse } from "../gen/envoy/service/ext_proc/v3/external_processor.js";
import type { Logger } from "../log.js";
import { decisionDrops } from "../envoy-mutation-rules.js";
import type { TransportMetrics } from "./metrics.js";
import { RequestProcessor, snake, type ProcessorSettings } from "./processor.js";

/** gRPC metadata key (Envoy grpc_service.initial_metadata) telling the listener's direction. */
export const DIRECTION_METADATA_KEY = "x-meshext-direction";

export interface StreamDeps {
  decider: () => Decider;
  settings: ProcessorSettings;
  metrics: TransportMetrics;
  log: Logger;
  /** --decision-log, when on. */
  decisionLog?: DecisionRecorder;
}

let nextStreamId = 1;

function directionOf(call: ServerDuplexStream<ProcessingRequest, ProcessingResponse>): Direction {
  const value = call.metadata.get(DIRECTION_METADATA_KEY)[0];
  return String(value ?? "").toLowerCase() === "outbound" ? "outbound" : "inbound";
}

function replyKind(reply: ProcessingResponse): string {
  if (reply.response) return snake(reply.response.$case);
  return reply.overrideMessageTimeout ? "override_message_timeout" : "empty";
}

export function handleProcessStream(deps: StreamDeps, call: ServerDuplexStream<ProcessingRequest, ProcessingResponse>): void {
  const streamId = nextStreamId++;
  const direction = directionOf(call);
  const processor = new RequestProcessor(deps.decider(), direction, deps.settings);
  const { metrics, log, decisionLog } = deps;
  let done = false;
  let pending = 0;
  let halfClosed = false;
  const timers = new Set<NodeJS.Timeout>();
  metrics.streamsOpened.inc();

  const finish = (how: "ok" | "cancelled" | "failed", code?: GrpcStatus, details?: string) => {
    if (done) return;
    done = true;
    for (const t of timers) clearTimeout(t);
    timers.clear();
    if (how === "ok") {
      metrics.streamsEnded.inc();
      call.end();
    } else if (how === "cancelled") {
      metrics.streamsCancelled.inc();
    } else {
      metrics.streamsFailed.inc({ reason: code === GrpcStatus.INVALID_ARGUMENT ? "invalid_argument" : "internal" });
      call.emit("error", { code, details });
    }
  };

  const send = (reply: ProcessingResponse) => {
    if (done) return;
    metrics.repliedWith(replyKind(reply)).inc();
    if (reply.response?.$case === "immediateResponse") {
      metrics.immediateResponses.inc({ status: String(reply.response.immediateResponse.status?.code ?? 200) });
    }
    call.write(reply);
  };

  call.on("data", (msg: ProcessingRequest) => {
    if (done) return;
    const phase = msg.request?.$case;
    const phaseLabel = phase ? snake(phase) : "none";
    metrics.receivedIn(phaseLabel).inc();
    const endTimer = metrics.timerFor(phaseLabel).startTimer();
    const startedMs = decisionLog ? performance.now() : 0;
    let step;
    try {
      step = processor.handle(msg);
    } catch (err) {
      log.error({ err, streamId }, "request processing failed");
      finish("failed", GrpcStatus.INTERNAL, `meshext internal error: ${(err as Error).message}`);
      return;
    }
    if (step.type === "invalid") {
      log.warn({ streamId, requestId: processor.requestId, reason: step.message }, "invalid ext_proc message");
      finish("failed", GrpcStatus.INVALID_ARGUMENT, step.message);
      return;
    }
    if (step.type === "ignore") {
      endTimer();
      return;
    }
    if (step.decision) {
      const e = step.decision.explain;
      metrics.decidedAs(`${e.kind} ${e.action} ${direction}`).inc();
      if (e.policy !== undefined) metrics.decidedByPolicy(`${e.kind}\0${e.policy}\0${e.action}`).inc();
      if (decisionLog) decisionLog.record(processor.facts!, step.decision, performance.now() - startedMs);
      for (const d of decisionDrops(step.decision)) metrics.headerEditsDropped.labels({ phase: d.phase, reason: d.reason }).inc();
      if (log.isLevelEnabled("debug")) {
        log.debug({ streamId, requestId: processor.requestId, decision: step.decision.type, ...e, delayMs: step.delayMs }, "decision");
      }
    }
    if (step.delayCappedFromMs !== undefined) {
      metrics.delaysCapped.inc();
      log.warn({ streamId, wantedMs: step.delayCappedFromMs, appliedMs: step.delayMs }, "fault delay shortened to fit Envoy's message timeout (raise max_message_timeout)");
    }
    if (step.first) send(step.first);
    const complete = () => {
      send(step.reply);
      endTimer();
      if (step.endStream || halfClosed) finish("ok");
    };
    if (step.delayMs > 0) {
      pending++;
      const t = setTimeout(() => {
        timers.delete(t);
        pending--;
        complete();
      }, step.delayMs);
      timers.add(t);
    } else {
      complete();
    }
  });
  call.on("end", () => {
    // Envoy half-closed: nothing more will come. End with OK once held replies are out.
    halfClosed = true;
    if (pending === 0) finish("ok");
  });
  call.on("cancelled", () => finish("cancelled"));
  call.on("error", (err: Error & { code?: number }) => {
    if (done) return;
    if (err.code === GrpcStatus.CANCELLED) finish("cancelled");
    else {
      log.warn({ streamId, err: err.message }, "ext_proc stream error");
      done = true;
      metrics.streamsFailed.inc({ reason: "transport" });
    }
  });
}
