// A test client that behaves like Envoy's ext_proc HTTP filter (source/extensions/filters/http/ext_proc/ in Envoy):
// one stream per HTTP request, strict lock-step with a message timer, processing modes and
// mode_override, mutation rules, immediate responses, fail-open/closed, and both close patterns.
import { credentials, Metadata, status as GrpcStatus, type ClientDuplexStream } from "@grpc/grpc-js";
import type { HeaderMutation, ProcessingRequest, ProcessingResponse } from "../../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";
import type { ProcessingMode } from "../../extproc/gen/envoy/extensions/filters/http/ext_proc/v3/processing_mode.js";
import { applyHeaderMutation, type Headers, type MutationRules } from "./envoy-mutation-rules.js";
import { ExternalProcessorClient } from "./grpc-js-ext-proc.js";

export type HeaderMode = "SEND" | "SKIP";
export type BodyMode = "NONE" | "BUFFERED";
export type { Headers };

export interface FilterConfig {
  requestHeaderMode?: HeaderMode;
  responseHeaderMode?: HeaderMode;
  requestBodyMode?: BodyMode;
  responseBodyMode?: BodyMode;
  requestTrailerMode?: HeaderMode;
  responseTrailerMode?: HeaderMode;
  /** @default 200 */
  messageTimeoutMs?: number;
  /** @default 0 (override_message_timeout ignored) */
  maxMessageTimeoutMs?: number;
  failureModeAllow?: boolean;
  allowModeOverride?: boolean;
  mutationRules?: MutationRules;
  /** Envoy's default is END_STREAM then RST_STREAM; "graceful" needs ext_proc_graceful_grpc_close. */
  closeMode?: "envoy-default" | "graceful";
  /** grpc_service.initial_metadata. */
  initialMetadata?: Record<string, string>;
  /** Values sent under attributes["envoy.filters.http.ext_proc"] on the first request message. */
  requestAttributes?: Record<string, unknown>;
  /** @default 500 */
  statusOnError?: number;
}

export interface HttpRequest {
  method?: string;
  path?: string;
  authority?: string;
  scheme?: string;
  headers?: Headers;
  body?: string;
  trailers?: Headers;
}

export interface UpstreamResponse {
  status: number;
  headers?: Headers;
  body?: string;
  trailers?: Headers;
}

export interface Outcome {
  /** HTTP status the downstream client got. */
  status: number;
  /** Response headers the downstream client got (after mutations). */
  headers: Headers;
  body: string;
  /** The request as the upstream saw it, or undefined for a local reply. */
  upstreamRequest?: { headers: Headers; body: string };
  /** Envoy's %RESPONSE_CODE_DETAILS% for local replies. */
  details?: string;
  grpcStatus?: number;
  /** Phases Envoy sent, in order. */
  sent: string[];
  /** Reply kinds received, in order. */
  received: string[];
  /** How the gRPC stream ended. */
  streamEnd: "not-opened" | "client-closed" | "server-ok" | "server-error" | "graceful-ok";
}

export const STAT_NAMES = [
  "streams_started",
  "stream_msgs_sent",
  "stream_msgs_received",
  "spurious_msgs_received",
  "streams_closed",
  "streams_failed",
  "failure_mode_allowed",
  "message_timeouts",
  "rejected_header_mutations",
  "override_message_timeout_received",
  "override_message_timeout_ignored",
] as const;
export type Stats = Record<(typeof STAT_NAMES)[number], number>;

type Wait = { kind: "reply"; msg: ProcessingResponse } | { kind: "timeout" } | { kind: "end"; code: number; details: string };

const MODE = { DEFAULT: 0, SEND: 1, SKIP: 2 } as const;
const BODY = { NONE: 0, STREAMED: 1, BUFFERED: 2, BUFFERED_PARTIAL: 3 } as const;

class ProcessingFailed extends Error {
  constructor(
    readonly status: number,
    readonly details: string,
  ) {
    super(details);
  }
}

/** One simulated Envoy worker: one HTTP/2 channel to the ext_proc server, one stream per request. */
export class EnvoyExtProcClient {
  readonly stats: Stats = Object.fromEntries(STAT_NAMES.map((n) => [n, 0])) as Stats;
  private readonly client: ExternalProcessorClient;
  private connected = false;

  constructor(
    address: string,
    private readonly config: FilterConfig = {},
  ) {
    this.client = new ExternalProcessorClient(address, credentials.createInsecure(), {
      "grpc.use_local_subchannel_pool": 1,
    });
  }

  close(): void {
    this.client.close();
  }

  /** Waits until the HTTP/2 connection is up, as Envoy's pool normally has it before requests flow. */
  ready(timeoutMs = 5000): Promise<void> {
    return new Promise((resolve, reject) => this.client.waitForReady(Date.now() + timeoutMs, (err) => (err ? reject(err) : resolve())));
  }

  /** Runs one HTTP request through the filter; `upstream` plays the router + app. */
  async request(req: HttpRequest, upstream: (headers: Headers, body: string) => UpstreamResponse = () => ({ status: 200 })): Promise<Outcome> {
    if (!this.connected) {
      await this.ready();
      this.connected = true;
    }
    return new RequestRun(this.client, this.config, this.stats).run(req, upstream);
  }
}

class RequestRun {
  private call: ClientDuplexStream<ProcessingRequest, ProcessingResponse> | undefined;
  private readonly inbox: Wait[] = [];
  private waiter: ((w: Wait) => void) | undefined;
  private ended: { code: number; details: string } | undefined;
  private complete = false;
  private firstMessage = true;
  private readonly mode: Required<Pick<FilterConfig, "requestHeaderMode" | "responseHeaderMode" | "requestBodyMode" | "responseBodyMode" | "requestTrailerMode" | "responseTrailerMode">>;
  private readonly outcome: Outcome = { status: 0, headers: [], body: "", sent: [], received: [], streamEnd: "not-opened" };

  constructor(
    private readonly client: ExternalProcessorClient,
    private readonly config: FilterConfig,
    private readonly stats: Stats,
  ) {
    this.mode = {
      requestHeaderMode: config.requestHeaderMode ?? "SEND",
      responseHeaderMode: config.responseHeaderMode ?? "SEND",
      requestBodyMode: config.requestBodyMode ?? "NONE",
      responseBodyMode: config.responseBodyMode ?? "NONE",
      requestTrailerMode: config.requestTrailerMode ?? "SKIP",
      responseTrailerMode: config.responseTrailerMode ?? "SKIP",
    };
  }

  async run(req: HttpRequest, upstream: (headers: Headers, body: string) => UpstreamResponse): Promise<Outcome> {
    const reqHeaders: Headers = [
      [":authority", req.authority ?? "backend"],
      [":path", req.path ?? "/"],
      [":method", req.method ?? "GET"],
      [":scheme", req.scheme ?? "http"],
      ...(req.headers ?? []).map(([k, v]): [string, string] => [k.toLowerCase(), v]),
    ];
    const reqBody = req.body ?? "";
    try {
      // Request path.
      const hasBody = reqBody.length > 0;
      const hasTrailers = (req.trailers ?? []).length > 0;
      if (this.mode.requestHeaderMode === "SEND" && !this.complete) {
        const reply = await this.exchange("requestHeaders", { headers: { headers: toHeaderValues(reqHeaders) }, attributes: {}, endOfStream: !hasBody && !hasTrailers }, true);
        if (reply) this.applyCommon(reply, "requestHeaders", reqHeaders);
      }
      if (hasBody && this.mode.requestBodyMode === "BUFFERED" && !this.complete) {
        const reply = await this.exchange("requestBody", { body: Buffer.from(reqBody), endOfStream: !hasTrailers, endOfStreamWithoutMessage: false }, false);
        if (reply) this.applyCommon(reply, "requestBody", reqHeaders);
      }
      if (hasTrailers && this.mode.requestTrailerMode === "SEND" && !this.complete) {
        await this.exchange("requestTrailers", { trailers: { headers: toHeaderValues(req.trailers!) } }, false);
      }
      if (this.outcome.status !== 0) return await this.finish();

      // Upstream.
      const up = upstream(reqHeaders, reqBody);
      this.outcome.upstreamRequest = { headers: reqHeaders, body: reqBody };
      const respHeaders: Headers = [[":status", String(up.status)], ...(up.headers ?? [])];
      const respBody = up.body ?? "";
      const respTrailers = up.trailers ?? [];
      if (this.mode.responseHeaderMode === "SEND" && !this.complete) {
        const reply = await this.exchange("responseHeaders", { headers: { headers: toHeaderValues(respHeaders) }, attributes: {}, endOfStream: respBody.length === 0 && respTrailers.length === 0 }, true);
        if (reply) this.applyCommon(reply, "responseHeaders", respHeaders);
      }
      if (this.outcome.status !== 0) return await this.finish();
      if (respBody.length > 0 && this.mode.responseBodyMode === "BUFFERED" && !this.complete) {
        await this.exchange("responseBody", { body: Buffer.from(respBody), endOfStream: respTrailers.length === 0, endOfStreamWithoutMessage: false }, false);
      }
      if (respTrailers.length > 0 && this.mode.responseTrailerMode === "SEND" && !this.complete) {
        await this.exchange("responseTrailers", { trailers: { headers: toHeaderValues(respTrailers) } }, false);
      }
      if (this.outcome.status === 0) {
        const status = Number(respHeaders.find(([k]) => k === ":status")![1]);
        this.outcome.status = status;
        this.outcome.headers = respHeaders.filter(([k]) => k !== ":status");
        this.outcome.body = respBody;
      }
    } catch (err) {
      if (!(err instanceof ProcessingFailed)) throw err;
      this.outcome.status = err.status;
      this.outcome.details = err.details;
      this.outcome.headers = [];
      this.outcome.upstreamRequest = undefined;
    }
    return this.finish();
  }

  /** Sends one message and waits for its reply; undefined = continue without ext_proc. */
  private async exchange(phase: string, payload: unknown, isHeaders: boolean): Promise<ProcessingResponse | undefined> {
    const call = this.open();
    const msg = { request: { $case: phase, [phase]: payload }, attributes: {}, observabilityMode: false } as unknown as ProcessingRequest;
    if (this.firstMessage && this.config.requestAttributes) {
      msg.attributes = { "envoy.filters.http.ext_proc": this.config.requestAttributes };
    }
    this.firstMessage = false;
    this.outcome.sent.push(phase);
    this.stats.stream_msgs_sent++;
    call.write(msg);
    let timeoutMs = this.config.messageTimeoutMs ?? 200;
    let overridden = false;
    for (;;) {
      const got = await this.next(timeoutMs);
      if (got.kind === "timeout") {
        this.stats.message_timeouts++;
        return this.fail(504, "ext_proc_error_per-message_timeout_exceeded", true);
      }
      if (got.kind === "end") {
        if (got.code === GrpcStatus.OK) {
          this.stats.streams_closed++;
          this.complete = true;
          this.outcome.streamEnd = "server-ok";
          return undefined;
        }
        this.outcome.streamEnd = "server-error";
        return this.fail(this.config.statusOnError ?? 500, `ext_proc_error_gRPC_error_${got.code}{${got.details}}`, false);
      }
      const reply = got.msg;
      this.stats.stream_msgs_received++;
      const kind = reply.response?.$case ?? (reply.overrideMessageTimeout ? "overrideMessageTimeout" : "none");
      this.outcome.received.push(kind);
      if (!reply.response && reply.overrideMessageTimeout) {
        const ms = reply.overrideMessageTimeout.seconds * 1000 + reply.overrideMessageTimeout.nanos / 1e6;
        const max = this.config.maxMessageTimeoutMs ?? 0;
        if (max > 0 && !overridden && ms >= 1 && ms <= max) {
          this.stats.override_message_timeout_received++;
          overridden = true;
          timeoutMs = ms;
        } else {
          this.stats.override_message_timeout_ignored++;
        }
        continue;
      }
      if (reply.response?.$case === "immediateResponse") {
        this.applyImmediate(reply);
        return undefined;
      }
      if (reply.response?.$case !== phase) {
        this.stats.spurious_msgs_received++;
        return this.fail(this.config.statusOnError ?? 500, `ext_proc_error_spurious_message_${kind}`, false);
      }
      if (isHeaders && reply.modeOverride && this.config.allowModeOverride) this.applyModeOverride(reply.modeOverride);
      return reply;
    }
  }

  private fail(status: number, details: string, isTimeout: boolean): undefined {
    if (this.config.failureModeAllow) {
      this.stats.failure_mode_allowed++;
      this.complete = true;
      return undefined;
    }
    if (!isTimeout) this.stats.streams_failed++;
    this.complete = true;
    throw new ProcessingFailed(status, details);
  }

  private applyModeOverride(m: ProcessingMode): void {
    const header = (v: number, cur: HeaderMode): HeaderMode => (v === MODE.SEND ? "SEND" : v === MODE.SKIP ? "SKIP" : cur);
    const body = (v: number): BodyMode => (v === BODY.BUFFERED ? "BUFFERED" : "NONE");
    this.mode.responseHeaderMode = header(m.responseHeaderMode, this.mode.responseHeaderMode);
    this.mode.requestTrailerMode = header(m.requestTrailerMode, this.mode.requestTrailerMode);
    this.mode.responseTrailerMode = header(m.responseTrailerMode, this.mode.responseTrailerMode);
    this.mode.requestBodyMode = body(m.requestBodyMode);
    this.mode.responseBodyMode = body(m.responseBodyMode);
  }

  private applyCommon(reply: ProcessingResponse, phase: string, headers: Headers): void {
    const r = reply.response as unknown as Record<string, { response?: { headerMutation?: HeaderMutation } }>;
    const mutation = r[phase]?.response?.headerMutation;
    if (mutation) this.applyMutation(mutation, headers);
  }

  private applyImmediate(reply: ProcessingResponse): void {
    if (reply.response?.$case !== "immediateResponse") return;
    const ir = reply.response.immediateResponse;
    const code = ir.status?.code ?? 0;
    this.complete = true;
    this.outcome.status = code >= 200 ? code : 200;
    this.outcome.headers = [];
    if (ir.headers) this.applyMutation(ir.headers, this.outcome.headers);
    this.outcome.body = ir.body.toString("utf8");
    this.outcome.details = ir.details.replace(/\s/g, "_");
    this.outcome.grpcStatus = ir.grpcStatus?.status;
    this.outcome.upstreamRequest = undefined;
  }

  /** Envoy's mutation_utils (envoy-mutation-rules.ts); a rule violation that is an error fails the request. */
  private applyMutation(m: HeaderMutation, headers: Headers): void {
    const result = applyHeaderMutation(m, headers, this.config.mutationRules ?? {});
    this.stats.rejected_header_mutations += result.rejected;
    if (result.error) throw new ProcessingFailed(this.config.statusOnError ?? 500, result.error);
  }

  private open(): ClientDuplexStream<ProcessingRequest, ProcessingResponse> {
    if (this.call) return this.call;
    const md = new Metadata();
    for (const [k, v] of Object.entries(this.config.initialMetadata ?? {})) md.set(k, v);
    const call = this.client.process(md);
    this.stats.streams_started++;
    this.outcome.streamEnd = "client-closed";
    call.on("data", (msg: ProcessingResponse) => this.push({ kind: "reply", msg }));
    call.on("status", (s: { code: number; details: string }) => {
      this.ended = s;
      this.push({ kind: "end", code: s.code, details: s.details });
    });
    call.on("error", () => {
      /* the status event carries the outcome */
    });
    this.call = call;
    return call;
  }

  private push(w: Wait): void {
    if (this.waiter) {
      const fn = this.waiter;
      this.waiter = undefined;
      fn(w);
    } else this.inbox.push(w);
  }

  private next(timeoutMs: number): Promise<Wait> {
    const queued = this.inbox.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        resolve({ kind: "timeout" });
      }, timeoutMs);
      this.waiter = (w) => {
        clearTimeout(timer);
        resolve(w);
      };
    });
  }

  /** Closes the side stream as Envoy does. */
  private async finish(): Promise<Outcome> {
    const call = this.call;
    if (!call || this.ended) return this.outcome;
    if ((this.config.closeMode ?? "envoy-default") === "envoy-default") {
      call.end();
      call.cancel();
      return this.outcome;
    }
    call.end();
    const status = await new Promise<{ code: number } | undefined>((resolve) => {
      if (this.ended) return resolve(this.ended);
      const timer = setTimeout(() => resolve(undefined), 1000);
      call.on("status", (s) => {
        clearTimeout(timer);
        resolve(s);
      });
    });
    if (status?.code === GrpcStatus.OK) this.outcome.streamEnd = "graceful-ok";
    else call.cancel();
    return this.outcome;
  }
}

function toHeaderValues(headers: Headers) {
  return headers.map(([key, value]) => ({ key, value: "", rawValue: Buffer.from(value, "utf8") }));
}
