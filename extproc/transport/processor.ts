// One RequestProcessor per ext_proc stream (= per HTTP request): checks that Envoy's messages
// come in a legal order, asks the Decider once on request_headers, and says what to send back.
// PURE: no gRPC, no timers; the stream layer performs the returned Step.
import type { Decider, Decision, Direction, RequestFacts } from "../decision.js";
import type { ProcessingRequest, ProcessingResponse } from "../gen/envoy/service/ext_proc/v3/external_processor.js";
import { continueRequestHeaders, continueResponseHeaders, immediateResponse, overrideMessageTimeout, passThrough, requestFacts } from "./mapping.js";

export type Phase = NonNullable<ProcessingRequest["request"]>["$case"];

export const PHASES: readonly Phase[] = ["requestHeaders", "requestBody", "requestTrailers", "responseHeaders", "responseBody", "responseTrailers"];

export interface ProcessorSettings {
  /** Envoy's message_timeout: a reply held longer than this gets the client a 504. */
  messageTimeoutMs: number;
  /** Envoy's max_message_timeout (0 = Envoy cannot extend the timer). */
  maxMessageTimeoutMs: number;
  /** Add x-meshext-decision to local replies. */
  explainHeader: boolean;
}

/** Time kept free inside Envoy's message timer for our own work and the network: 10 %, at least 20 ms. */
export function delayHeadroomMs(timerMs: number): number {
  return Math.max(20, Math.round(timerMs / 10));
}

/** What to do with one incoming message. */
export type Step =
  | {
      type: "reply";
      /** Sent immediately, before any delay (override_message_timeout). */
      first?: ProcessingResponse;
      /** The reply itself, sent after delayMs. */
      reply: ProcessingResponse;
      delayMs: number;
      /** The requested delay was longer than Envoy allows and was shortened. */
      delayCappedFromMs?: number;
      /**
       * Envoy can send nothing more that we need (the message said end_of_stream and no response
       * phase is wanted, or an immediate_response ended processing): finish the call with OK right
       * after the reply instead of waiting for Envoy's half-close.
       */
      endStream: boolean;
      /** Set on the request_headers step: the decision taken. */
      decision?: Decision;
      /** Set on the request_headers step: what the message said (for the decision log). */
      facts?: RequestFacts;
    }
  | { type: "ignore"; why: string }
  | { type: "invalid"; message: string };

type DirectionStage = "none" | "headers" | "body" | "trailers";

export class RequestProcessor {
  private request: DirectionStage = "none";
  private response: DirectionStage = "none";
  private finished = false;
  private decision: Decision | undefined;
  /** x-request-id of the HTTP request, once request_headers arrived (for logs). */
  requestId: string | undefined;

  constructor(
    private readonly decider: Decider,
    private readonly direction: Direction,
    private readonly settings: ProcessorSettings,
    /** The inbound the stream's listener serves (initial metadata x-meshext-inbound), if named. */
    private readonly inbound?: string,
  ) {}

  get decided(): Decision | undefined {
    return this.decision;
  }

  handle(msg: ProcessingRequest): Step {
    const phase = msg.request?.$case;
    if (phase === undefined) return { type: "invalid", message: "ProcessingRequest has no request set (expected one of request_headers, response_headers, request_body, response_body, request_trailers, response_trailers)" };
    if (this.finished) return { type: "invalid", message: `${snake(phase)} received after processing ended (an immediate_response was sent)` };
    const orderError = this.advance(phase);
    if (orderError) return { type: "invalid", message: orderError };
    if (msg.observabilityMode) return { type: "ignore", why: "observability mode: replies are ignored by Envoy" };

    switch (msg.request!.$case) {
      case "requestHeaders":
        return this.onRequestHeaders(msg, msg.request!.requestHeaders);
      case "responseHeaders":
        return { type: "reply", reply: continueResponseHeaders(this.continueDecision()?.responseHeaders), delayMs: 0, endStream: msg.request!.responseHeaders.endOfStream };
      case "requestBody":
        return { type: "reply", reply: passThrough("requestBody"), delayMs: 0, endStream: msg.request!.requestBody.endOfStream && !this.needsResponsePhase() };
      case "responseBody":
        return { type: "reply", reply: passThrough("responseBody"), delayMs: 0, endStream: msg.request!.responseBody.endOfStream };
      case "requestTrailers":
        return { type: "reply", reply: passThrough("requestTrailers"), delayMs: 0, endStream: !this.needsResponsePhase() };
      case "responseTrailers":
        return { type: "reply", reply: passThrough("responseTrailers"), delayMs: 0, endStream: true };
    }
  }

  /** True while the decision still has response-header edits to apply. */
  private needsResponsePhase(): boolean {
    return this.continueDecision()?.responseHeaders !== undefined;
  }

  private continueDecision() {
    return this.decision?.type === "continue" ? this.decision : undefined;
  }

  private onRequestHeaders(msg: ProcessingRequest, headers: Extract<ProcessingRequest["request"], { $case: "requestHeaders" }>["requestHeaders"]): Step {
    const facts = requestFacts(headers, msg.attributes as Record<string, Record<string, unknown> | undefined>, this.direction);
    if (this.inbound !== undefined) facts.inbound = this.inbound;
    this.requestId = facts.requestId;
    const decision = this.decider.decide(facts);
    this.decision = decision;
    const { delayMs, first, cappedFrom } = this.planDelay(decision.delayMs ?? 0);
    if (decision.type === "respond") {
      this.finished = true;
      const isGrpc = (facts.headers.get("content-type") ?? "").startsWith("application/grpc");
      return { type: "reply", first, reply: immediateResponse(decision, isGrpc, this.settings.explainHeader), delayMs, delayCappedFromMs: cappedFrom, endStream: true, decision, facts };
    }
    const needsResponse = this.needsResponsePhase();
    return {
      type: "reply",
      first,
      reply: continueRequestHeaders(decision.requestHeaders, !needsResponse, decision.clearRouteCache),
      delayMs,
      delayCappedFromMs: cappedFrom,
      endStream: !needsResponse && headers.endOfStream,
      decision,
      facts,
    };
  }

  /** A delay must fit Envoy's message timer: extend it when Envoy allows, else shorten the delay. */
  private planDelay(wantedMs: number): { delayMs: number; first?: ProcessingResponse; cappedFrom?: number } {
    if (wantedMs <= 0) return { delayMs: 0 };
    const { messageTimeoutMs, maxMessageTimeoutMs } = this.settings;
    if (wantedMs + delayHeadroomMs(messageTimeoutMs) <= messageTimeoutMs) return { delayMs: wantedMs };
    const extendedMs = wantedMs + delayHeadroomMs(wantedMs);
    if (extendedMs <= maxMessageTimeoutMs) return { delayMs: wantedMs, first: overrideMessageTimeout(extendedMs) };
    const ceilingMs = Math.max(maxMessageTimeoutMs, messageTimeoutMs);
    const allowed = Math.max(0, ceilingMs - delayHeadroomMs(ceilingMs));
    const first = maxMessageTimeoutMs > messageTimeoutMs ? overrideMessageTimeout(maxMessageTimeoutMs) : undefined;
    return { delayMs: allowed, first, cappedFrom: wantedMs };
  }

  /** Moves the per-direction state machine; returns why a message is out of order. */
  private advance(phase: Phase): string | undefined {
    const isRequest = phase.startsWith("request");
    const stage = isRequest ? this.request : this.response;
    const next: DirectionStage = phase.endsWith("Headers") ? "headers" : phase.endsWith("Body") ? "body" : "trailers";
    if (!isRequest && this.request === "none") return `${snake(phase)} before request_headers (request header processing must be SEND)`;
    const legal =
      (next === "headers" && stage === "none") ||
      (next === "body" && (stage === "headers" || stage === "body")) ||
      (next === "trailers" && (stage === "headers" || stage === "body"));
    if (!legal) {
      return stage === "none" ? `${snake(phase)} before ${isRequest ? "request" : "response"}_headers` : `${snake(phase)} after ${snake(stageCase(isRequest, stage))}`;
    }
    if (isRequest) this.request = next;
    else this.response = next;
    return undefined;
  }
}

function stageCase(isRequest: boolean, stage: DirectionStage): string {
  const prefix = isRequest ? "request" : "response";
  return prefix + stage[0]!.toUpperCase() + stage.slice(1);
}

const SNAKE_CASE = new Map<string, string>();

/** requestHeaders → request_headers, as in Envoy's proto (memoised: it labels every message's metrics). */
export function snake(phase: string): string {
  let name = SNAKE_CASE.get(phase);
  if (name === undefined) {
    name = phase.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());
    SNAKE_CASE.set(phase, name);
  }
  return name;
}
