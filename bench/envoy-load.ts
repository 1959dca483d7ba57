// Closed-loop load in Envoy's ext_proc shape: one gRPC stream per HTTP request, request_headers
// (and response_headers when the reply asks for it), then Envoy's close: END_STREAM+RST_STREAM
// by default, or half-close and wait for OK (ext_proc_graceful_grpc_close).
import { credentials, Metadata, type ClientDuplexStream } from "@grpc/grpc-js";
import type { ProcessingRequest, ProcessingResponse } from "../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";
import { ExternalProcessorClient } from "../test/helpers/grpc-js-ext-proc.js";

export type CloseMode = "envoy-default" | "graceful";

export interface LoadOptions {
  target: string;
  inFlight: number;
  /** Stop after this many requests… */
  requests?: number;
  /** …or after this long. */
  durationMs?: number;
  closeMode: CloseMode;
  /** HTTP/2 connections (Envoy: one per worker). */
  channels?: number;
  /** Builds the i-th request's headers. */
  headers?: (i: number) => Array<[string, string]>;
  metadata?: Record<string, string>;
  /** Called after each request: start (performance.timeOrigin-based ms since epoch), latency ms, error. */
  onRequest?: (startMs: number, latencyMs: number, err: string | undefined) => void;
}

export interface LoadResult {
  ok: number;
  failed: number;
  errors: Record<string, number>;
  /** Per-request latency, ms (stream open → last reply). */
  latenciesMs: number[];
  elapsedMs: number;
}

/** A realistic inbound request: pseudo-headers, a dozen headers, and an XFCC with a SPIFFE URI. */
export function realisticHeaders(i: number): Array<[string, string]> {
  return [
    [":authority", "backend.default.svc:8080"],
    [":path", `/api/v1/orders/${i % 997}?expand=items`],
    [":method", i % 5 === 0 ? "POST" : "GET"],
    [":scheme", "http"],
    ["user-agent", "Go-http-client/1.1"],
    ["accept", "application/json"],
    ["accept-encoding", "gzip"],
    ["x-request-id", `0f9a${i.toString(16).padStart(8, "0")}-aaaa-bbbb-cccc-1234567890ab`],
    ["x-forwarded-proto", "http"],
    ["x-forwarded-client-cert", `By=spiffe://default/backend;Hash=4f3c0b2e9a;URI=spiffe://default/web;URI=kuma://version/v${i % 3}`],
    ["traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"],
    ["content-type", "application/json"],
  ];
}

function message(headers: Array<[string, string]>, phase: "requestHeaders" | "responseHeaders"): ProcessingRequest {
  const payload = { headers: { headers: headers.map(([key, v]) => ({ key, value: "", rawValue: Buffer.from(v) })) }, attributes: {}, endOfStream: true };
  return { request: phase === "requestHeaders" ? { $case: "requestHeaders", requestHeaders: payload } : { $case: "responseHeaders", responseHeaders: payload }, attributes: {}, observabilityMode: false };
}

function oneRequest(client: ExternalProcessorClient, md: Metadata, headers: Array<[string, string]>, closeMode: CloseMode): Promise<string | undefined> {
  return new Promise((resolve) => {
    const call: ClientDuplexStream<ProcessingRequest, ProcessingResponse> = client.process(md);
    let settled = false;
    const settle = (err?: string) => {
      if (settled) return;
      settled = true;
      resolve(err);
    };
    let phase: "requestHeaders" | "responseHeaders" = "requestHeaders";
    const close = () => {
      if (closeMode === "envoy-default") {
        call.end();
        call.cancel();
        settle();
      } else {
        call.end();
      }
    };
    call.on("data", (reply: ProcessingResponse) => {
      const kind = reply.response?.$case;
      if (kind === "immediateResponse") return close();
      if (kind !== phase) return settle(`spurious ${kind}`);
      if (phase === "requestHeaders" && reply.modeOverride?.responseHeaderMode !== 2) {
        phase = "responseHeaders";
        call.write(message([[":status", "200"], ["content-type", "application/json"]], "responseHeaders"));
        return;
      }
      close();
    });
    call.on("status", (s) => {
      if (s.code === 0) settle();
      else settle(`grpc ${s.code}`);
    });
    call.on("error", () => {});
    call.write(message(headers, "requestHeaders"));
  });
}

export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const channels = Array.from({ length: opts.channels ?? 1 }, () =>
    new ExternalProcessorClient(opts.target, credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1 }),
  );
  await Promise.all(channels.map((c) => new Promise<void>((res, rej) => c.waitForReady(Date.now() + 5000, (e) => (e ? rej(e) : res())))));
  const md = new Metadata();
  for (const [k, v] of Object.entries(opts.metadata ?? {})) md.set(k, v);
  const headers = opts.headers ?? realisticHeaders;
  const result: LoadResult = { ok: 0, failed: 0, errors: {}, latenciesMs: [], elapsedMs: 0 };
  const started = performance.now();
  const deadline = opts.durationMs !== undefined ? started + opts.durationMs : Infinity;
  let issued = 0;
  const worker = async (w: number) => {
    for (;;) {
      if (opts.requests !== undefined && issued >= opts.requests) return;
      if (performance.now() >= deadline) return;
      const i = issued++;
      const t0 = performance.now();
      const err = await oneRequest(channels[w % channels.length]!, md, headers(i), opts.closeMode);
      opts.onRequest?.(performance.timeOrigin + t0, performance.now() - t0, err);
      if (err === undefined) {
        result.ok++;
        result.latenciesMs.push(performance.now() - t0);
      } else {
        result.failed++;
        result.errors[err] = (result.errors[err] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: opts.inFlight }, (_, w) => worker(w)));
  result.elapsedMs = performance.now() - started;
  for (const c of channels) c.close();
  return result;
}

export function percentile(sortedMs: number[], p: number): number {
  if (sortedMs.length === 0) return NaN;
  return sortedMs[Math.min(sortedMs.length - 1, Math.floor((p / 100) * sortedMs.length))]!;
}
