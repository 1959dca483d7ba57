// The sidecar's probe port: kubelet's rewritten probes arrive here (the init container leaves this
// port out of the redirect) and are forwarded to the app's real probe — HTTP(S), TCP connect or the
// gRPC health check — from inside the pod, so no probe passes Envoy and its policies, and nothing
// but the declared probes is reachable: any other path is 404.
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect as http2Connect, constants as h2 } from "node:http2";
import { request as httpsRequest } from "node:https";
import { connect as tcpConnect, type AddressInfo } from "node:net";
import { Counter, type Registry } from "prom-client";
import type { Logger } from "../log.js";
import type { VirtualProbe } from "./virtual-path.js";

/** Longest wait for the app when kubelet stays connected (kubelet's own timeoutSeconds is usually shorter). */
export const PROBE_UPSTREAM_TIMEOUT_MS = 10_000;
/** Response body bytes passed back (kubelet reads at most 10 KiB of a probe body). */
const MAX_BODY_BYTES = 10 * 1024;
/** Request headers never forwarded: hop-by-hop ones, and Host (the app's own host:port is sent). */
const DROPPED_HEADERS = new Set(["host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "content-length"]);
/** grpc.health.v1.HealthCheckResponse.ServingStatus SERVING. */
const GRPC_SERVING = 1;

export interface ProbeServerOptions {
  /** Allowed paths → the probe each forwards to (parseProbeList). */
  probes: ReadonlyMap<string, VirtualProbe>;
  /** Where the app is reached: the pod IP, where kubelet would have probed it. */
  appHost: string;
  log: Logger;
  registry?: Registry;
  upstreamTimeoutMs?: number;
}

type Outcome = { status: number; body: Buffer; headers?: Record<string, string> };

function text(status: number, message: string): Outcome {
  return { status, body: Buffer.from(message + "\n"), headers: { "content-type": "text/plain; charset=utf-8" } };
}

function forwardHttp(probe: Extract<VirtualProbe, { kind: "http" | "https" }>, host: string, req: IncomingMessage, signal: AbortSignal): Promise<Outcome> {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !DROPPED_HEADERS.has(k)) headers[k] = v;
  const send = probe.kind === "https" ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const upstream = send(
      { host, port: probe.port, path: probe.path, method: "GET", headers, signal, ...(probe.kind === "https" ? { rejectUnauthorized: false } : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          if (size < MAX_BODY_BYTES) chunks.push(c.subarray(0, MAX_BODY_BYTES - size));
          size += c.length;
        });
        res.on("end", () => {
          const out: Record<string, string> = {};
          if (typeof res.headers["content-type"] === "string") out["content-type"] = res.headers["content-type"];
          // No Location: kubelet would follow a redirect to this port, where only probe paths exist; it counts any 3xx as success.
          resolve({ status: res.statusCode ?? 502, body: Buffer.concat(chunks), headers: out });
        });
        res.on("error", () => resolve(text(503, "app closed the probe response")));
      },
    );
    upstream.on("error", (err) => resolve(text(503, `app probe failed: ${err.message}`)));
    upstream.end();
  });
}

function probeTcp(port: number, host: string, signal: AbortSignal): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port });
    const done = (o: Outcome) => {
      socket.destroy();
      resolve(o);
    };
    signal.addEventListener("abort", () => done(text(503, "app did not accept the connection in time")), { once: true });
    socket.once("connect", () => done(text(200, `port ${port} accepts connections`)));
    socket.once("error", (err) => done(text(503, `port ${port}: ${err.message}`)));
  });
}

/** A gRPC message frame holding HealthCheckRequest{service}. */
function healthRequest(service: string): Buffer {
  const name = Buffer.from(service, "utf8");
  const body = name.length === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x0a]), varint(name.length), name]);
  const frame = Buffer.alloc(5);
  frame.writeUInt32BE(body.length, 1);
  return Buffer.concat([frame, body]);
}

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}

/** HealthCheckResponse.status (field 1, varint) from one message frame; undefined if absent or malformed. */
export function servingStatusOf(frame: Buffer): number | undefined {
  if (frame.length < 5 || frame[0] !== 0) return undefined;
  const body = frame.subarray(5, 5 + frame.readUInt32BE(1));
  for (let i = 0; i < body.length; ) {
    const key = body[i++]!;
    if (key === 0x08) {
      let value = 0;
      for (let shift = 0; i < body.length; shift += 7) {
        const b = body[i++]!;
        value |= (b & 0x7f) << shift;
        if (!(b & 0x80)) return value;
      }
      return undefined;
    }
    return undefined; // the response has no other field we read; anything else is not a HealthCheckResponse we know
  }
  return 0; // an empty message: status UNKNOWN (proto3 default)
}

function probeGrpc(probe: Extract<VirtualProbe, { kind: "grpc" }>, host: string, signal: AbortSignal): Promise<Outcome> {
  return new Promise((resolve) => {
    const authority = host.includes(":") ? `[${host}]:${probe.port}` : `${host}:${probe.port}`;
    const session = http2Connect(`http://${authority}`);
    let settled = false;
    const done = (o: Outcome) => {
      if (settled) return;
      settled = true;
      session.destroy();
      resolve(o);
    };
    signal.addEventListener("abort", () => done(text(503, "gRPC health check timed out")), { once: true });
    session.on("error", (err) => done(text(503, `gRPC health check failed: ${err.message}`)));
    const stream = session.request({
      [h2.HTTP2_HEADER_METHOD]: "POST",
      [h2.HTTP2_HEADER_PATH]: "/grpc.health.v1.Health/Check",
      "content-type": "application/grpc",
      te: "trailers",
    });
    const chunks: Buffer[] = [];
    let grpcStatus: string | undefined;
    stream.on("response", (headers) => {
      if (headers["grpc-status"] !== undefined) grpcStatus = String(headers["grpc-status"]);
    });
    stream.on("trailers", (trailers) => {
      if (trailers["grpc-status"] !== undefined) grpcStatus = String(trailers["grpc-status"]);
    });
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("error", (err) => done(text(503, `gRPC health check failed: ${err.message}`)));
    stream.on("end", () => {
      if (grpcStatus !== "0") return done(text(503, `gRPC health check answered grpc-status ${grpcStatus ?? "(none)"}`));
      const status = servingStatusOf(Buffer.concat(chunks));
      done(status === GRPC_SERVING ? text(200, "SERVING") : text(503, `gRPC health status ${status ?? "unreadable"} (not SERVING)`));
    });
    stream.end(healthRequest(probe.service));
  });
}

export interface ProbeServer {
  readonly address: string;
  close(): Promise<void>;
}

export function startProbeServer(listen: string, opts: ProbeServerOptions): Promise<ProbeServer> {
  const timeoutMs = opts.upstreamTimeoutMs ?? PROBE_UPSTREAM_TIMEOUT_MS;
  const counter = opts.registry
    ? new Counter({ name: "meshext_probe_requests_total", help: "Kubelet probes forwarded to the app by the probe port, by probe kind and result.", labelNames: ["kind", "result"], registers: [opts.registry] })
    : undefined;
  const log = opts.log;
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const probe = req.method === "GET" || req.method === "HEAD" ? opts.probes.get(req.url ?? "") : undefined;
    if (!probe) {
      counter?.inc({ kind: "none", result: "not_found" });
      const o = text(404, "not a probe of this pod");
      res.writeHead(o.status, o.headers).end(o.body);
      return;
    }
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    res.on("close", () => abort.abort());
    let outcome: Outcome;
    try {
      outcome =
        probe.kind === "tcp"
          ? await probeTcp(probe.port, opts.appHost, abort.signal)
          : probe.kind === "grpc"
            ? await probeGrpc(probe, opts.appHost, abort.signal)
            : await forwardHttp(probe, opts.appHost, req, abort.signal);
    } finally {
      clearTimeout(timer);
    }
    const ok = outcome.status >= 200 && outcome.status < 400;
    counter?.inc({ kind: probe.kind, result: ok ? "success" : "failure" });
    if (!ok) log.debug({ path: req.url, status: outcome.status }, "app probe failed");
    if (!res.writableEnded && !res.destroyed) res.writeHead(outcome.status, outcome.headers).end(req.method === "HEAD" ? undefined : outcome.body);
  }
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.warn({ err: (err as Error).message }, "probe forwarding failed");
      if (!res.headersSent) res.writeHead(503).end();
    });
  });
  server.requestTimeout = timeoutMs + 5000;
  const m = /^(.*):(\d+)$/.exec(listen);
  const host = (m?.[1] ?? "").replace(/^\[(.*)\]$/, "$1");
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(Number(m?.[2] ?? 0), host, () => {
      server.off("error", reject);
      const a = server.address() as AddressInfo;
      resolve({
        address: `${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
