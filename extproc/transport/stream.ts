// The ExternalProcessor/Process handler: one RequestProcessor per gRPC stream; performs its
// Steps (replies, delays, OK close), ends the call on Envoy's half-close, and counts a cancel (reset)
// as cancelled, not ended — also a reset that comes after our OK but before the client's own end of the
// stream. A bad message fails only its own stream with INVALID_ARGUMENT.
import type { Decider, Direction } from "../decision.js";
import type { DecisionRecorder } from "../decision-log/recorder.js";
import { type ProcessingRequest, ProcessingResponse } from "../gen/envoy/service/ext_proc/v3/external_processor.js";
import type { Logger } from "../log.js";
import { decisionDrops } from "../envoy-mutation-rules.js";
import type { CallHandler, Method, ServerCall } from "./grpc-server.js";
import { type GrpcError, GrpcStatus, type GrpcStatusCode } from "./grpc-wire.js";
import type { TransportMetrics } from "./metrics.js";
import { SHARED_REPLIES } from "./mapping.js";
import { decodeProcessingRequest } from "./request-decoder.js";
import { RequestProcessor, snake, type ProcessorSettings, type Step } from "./processor.js";

/** gRPC metadata key (Envoy grpc_service.initial_metadata) telling the listener's direction. */
export const DIRECTION_METADATA_KEY = "x-meshext-direction";
/** gRPC metadata key naming the Dataplane inbound an inbound listener serves (the generated bootstrap sets it). */
export const INBOUND_METADATA_KEY = "x-meshext-inbound";

export interface StreamDeps {
  decider: () => Decider;
  settings: ProcessorSettings;
  metrics: TransportMetrics;
  log: Logger;
  /** --decision-log, when on. */
  decisionLog?: DecisionRecorder;
}

let nextStreamId = 1;

function directionOf(call: Call): Direction {
  return call.metadata(DIRECTION_METADATA_KEY)?.toLowerCase() === "outbound" ? "outbound" : "inbound";
}

function replyKind(reply: ProcessingResponse): string {
  if (reply.response) return snake(reply.response.$case);
  return reply.overrideMessageTimeout ? "override_message_timeout" : "empty";
}

type Call = ServerCall<ProcessingResponse>;
type ReplyStep = Extract<Step, { type: "reply" }>;

export const PROCESS_PATH = "/envoy.service.ext_proc.v3.ExternalProcessor/Process";

const encodeReply = (reply: ProcessingResponse): Uint8Array => ProcessingResponse.encode(reply).finish();
const SHARED_REPLY_BYTES = new Map(SHARED_REPLIES.map((reply) => [reply, encodeReply(reply)]));

/** ExternalProcessor/Process for the gRPC server. */
export function processMethod(deps: StreamDeps): Method<ProcessingRequest, ProcessingResponse> {
  return {
    path: PROCESS_PATH,
    decode: decodeProcessingRequest,
    encode: (reply) => SHARED_REPLY_BYTES.get(reply) ?? encodeReply(reply),
    open: (call) => new ProcessStream(deps, call),
  };
}

/**
 * One stream's state. A class with prototype methods, so a stream costs one object and its processor:
 * at thousands of streams a second, per-stream closures and sets show up in GC time.
 */
class ProcessStream implements CallHandler<ProcessingRequest> {
  private readonly streamId = nextStreamId++;
  private readonly direction: Direction;
  private readonly processor: RequestProcessor;
  private done = false;
  /** Replies held for a fault delay. */
  private pending = 0;
  private halfClosed = false;
  /** We ended the call with OK and wait for the stream to close: counted as ended then, or as cancelled on a reset. */
  private endedOk = false;
  /** Fault-delay timers, created with the first one. */
  private timers: Set<NodeJS.Timeout> | undefined;

  constructor(
    private readonly deps: StreamDeps,
    private readonly call: Call,
  ) {
    this.direction = directionOf(call);
    this.processor = new RequestProcessor(deps.decider(), this.direction, deps.settings, call.metadata(INBOUND_METADATA_KEY));
    deps.metrics.streamsOpened.count++;
  }

  onMessage(msg: ProcessingRequest): void {
    if (this.done) return;
    const { metrics, log } = this.deps;
    const phase = msg.request?.$case;
    const phaseLabel = phase ? snake(phase) : "none";
    metrics.receivedIn(phaseLabel).count++;
    const startedMs = performance.now();
    let step: Step;
    try {
      step = this.processor.handle(msg);
    } catch (err) {
      log.error({ err, streamId: this.streamId }, "request processing failed");
      this.finish("failed", GrpcStatus.INTERNAL, `meshext internal error: ${(err as Error).message}`);
      return;
    }
    if (step.type === "invalid") {
      log.warn({ streamId: this.streamId, requestId: this.processor.requestId, reason: step.message }, "invalid ext_proc message");
      this.finish("failed", GrpcStatus.INVALID_ARGUMENT, step.message);
      return;
    }
    if (step.type === "ignore") {
      this.observePhase(phaseLabel, startedMs);
      return;
    }
    if (step.decision) this.recordDecision(step, startedMs);
    if (step.delayCappedFromMs !== undefined) {
      metrics.delaysCapped.inc();
      log.warn({ streamId: this.streamId, wantedMs: step.delayCappedFromMs, appliedMs: step.delayMs }, "fault delay shortened to fit Envoy's message timeout (raise max_message_timeout)");
    }
    if (step.first) this.send(step.first);
    if (step.delayMs > 0) this.hold(step, phaseLabel, startedMs);
    else this.complete(step, phaseLabel, startedMs);
  }

  private recordDecision(step: ReplyStep, startedMs: number): void {
    const { metrics, log, decisionLog } = this.deps;
    const decision = step.decision!;
    const e = decision.explain;
    metrics.decidedAs(e.kind, e.action, this.direction).count++;
    if (e.policy !== undefined) metrics.decidedByPolicy(e.kind, e.policy, e.action).count++;
    if (decisionLog && step.facts) decisionLog.record(step.facts, decision, performance.now() - startedMs);
    for (const d of decisionDrops(decision)) metrics.headerEditsDropped.labels({ phase: d.phase, reason: d.reason }).inc();
    if (log.isLevelEnabled("debug")) {
      log.debug({ streamId: this.streamId, requestId: this.processor.requestId, decision: decision.type, ...e, delayMs: step.delayMs }, "decision");
    }
  }

  /** Sends the reply after the step's fault delay. */
  private hold(step: ReplyStep, phaseLabel: string, startedMs: number): void {
    this.pending++;
    const timers = (this.timers ??= new Set());
    const t = setTimeout(() => {
      timers.delete(t);
      this.pending--;
      this.complete(step, phaseLabel, startedMs);
    }, step.delayMs);
    timers.add(t);
  }

  private complete(step: ReplyStep, phaseLabel: string, startedMs: number): void {
    this.send(step.reply);
    this.observePhase(phaseLabel, startedMs);
    if (step.endStream || this.halfClosed) this.finish("ok");
  }

  private observePhase(phaseLabel: string, startedMs: number): void {
    this.deps.metrics.timerFor(phaseLabel).observe((performance.now() - startedMs) / 1000);
  }

  private send(reply: ProcessingResponse): void {
    if (this.done) return;
    const { metrics } = this.deps;
    metrics.repliedWith(replyKind(reply)).count++;
    if (reply.response?.$case === "immediateResponse") {
      metrics.immediateResponded(String(reply.response.immediateResponse.status?.code ?? 200)).count++;
    }
    this.call.write(reply);
  }

  onHalfClose(): void {
    // Envoy half-closed: nothing more will come. End with OK once held replies are out.
    this.halfClosed = true;
    if (!this.done && this.pending === 0) this.finish("ok");
  }

  onCancel(): void {
    if (this.endedOk) {
      this.endedOk = false;
      this.deps.metrics.streamsCancelled.count++;
    } else this.finish("cancelled");
  }

  onClosed(): void {
    if (!this.endedOk) return;
    this.endedOk = false;
    this.deps.metrics.streamsEnded.count++;
  }

  /** The transport could not read a message (bad framing, undecodable bytes, too large). */
  onReadError(error: GrpcError): void {
    this.deps.log.warn({ streamId: this.streamId, code: error.code, reason: error.details }, "unreadable ext_proc message");
    this.finish("failed", error.code, error.details);
  }

  private finish(how: "ok" | "cancelled" | "failed", code?: GrpcStatusCode, details?: string): void {
    if (this.done) return;
    this.done = true;
    if (this.timers) {
      for (const t of this.timers) clearTimeout(t);
      this.timers.clear();
    }
    const { metrics } = this.deps;
    if (how === "ok") {
      this.endedOk = true;
      this.call.end();
    } else if (how === "cancelled") {
      metrics.streamsCancelled.count++;
    } else {
      metrics.streamsFailed.inc({ reason: failureReason(code) });
      this.call.fail(code ?? GrpcStatus.INTERNAL, details ?? "");
    }
  }
}

/** The streams_failed reason label of a status we end a stream with. */
function failureReason(code: GrpcStatusCode | undefined): string {
  if (code === GrpcStatus.INVALID_ARGUMENT) return "invalid_argument";
  if (code === GrpcStatus.RESOURCE_EXHAUSTED) return "resource_exhausted";
  return "internal";
}
