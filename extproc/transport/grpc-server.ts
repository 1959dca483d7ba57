// A gRPC server on node:http2 for the few methods the sidecar serves (ext_proc Process, grpc.health.v1):
// routing by :path, one Call per stream, trailers, connection rotation and graceful shutdown. It replaces
// a general-purpose gRPC server because per-call overhead is most of what an ext_proc request costs.
import { existsSync, statSync, unlinkSync } from "node:fs";
import { connect, type Socket } from "node:net";
import {
  constants as h2, createServer, type Http2Server, type IncomingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream,
} from "node:http2";
import { splitHostPort } from "../host-port.js";
import { GrpcStatus } from "./grpc-wire.js";
import { HEADERS_ONLY, Http2Call, RESPONSE_HEADERS, statusTrailers, type Method } from "./grpc-call.js";

export { unaryMethod, type CallHandler, type Method, type ServerCall } from "./grpc-call.js";

export interface GrpcServerOptions {
  /** Larger messages fail their call with RESOURCE_EXHAUSTED. */
  maxReceiveMessageBytes: number;
  /** nghttp2's per-session memory cap (MiB); above it the session is refused new streams. */
  maxSessionMemoryMiB: number;
  /** After this many streams a connection is told to go away (0 = never). */
  maxStreamsPerConnection: number;
  onRotate: () => void;
  /** HTTP/2 stream or session errors (peers going away mid-stream, protocol errors): routine. */
  onStreamError?: (error: Error) => void;
  /** A method's handler threw: its call ended with INTERNAL. A bug, to be logged loudly. */
  onHandlerError?: (error: Error) => void;
}

/** Time between the shutdown notice and the final GOAWAY of a rotated connection: lets streams already on the wire land. */
export const ROTATION_GRACE_MS = 1000;
/** Opaque data on a rotation GOAWAY, visible in client debug logs. */
const ROTATION_GOAWAY_DATA = Buffer.from("meshext_max_streams_per_connection");
/** "host:port" (host may be [v6]) or "unix:/path" → what net listen takes. */
function listenTarget(address: string): { path: string } | { host: string; port: number } {
  if (address.startsWith("unix:")) return { path: address.slice("unix:".length) };
  const target = splitHostPort(address);
  if (!address.includes(":") || !Number.isInteger(target.port) || target.port < 0 || target.port > 65535) {
    throw new Error(`gRPC listen address ${JSON.stringify(address)} is not host:port or unix:/path`);
  }
  return target;
}

/** True when `path` is a Unix socket nobody accepts on (left by a process that died). */
function staleSocket(path: string): Promise<boolean> {
  if (!existsSync(path) || !statSync(path).isSocket()) return Promise.resolve(false);
  return new Promise((resolve) => {
    const probe = connect(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(false);
    });
    probe.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}

export class GrpcServer {
  private readonly methods = new Map<string, Method<unknown, unknown>>();
  private readonly servers: Http2Server[] = [];
  private readonly sessions = new Set<ServerHttp2Session>();
  /** Every open connection: a session closed gracefully keeps its socket until the peer ends its side. */
  private readonly sockets = new Set<Socket>();

  private readonly reportError = (error: Error) => this.options.onHandlerError?.(error);

  constructor(private readonly options: GrpcServerOptions) {}

  add<Req, Res>(method: Method<Req, Res>): void {
    this.methods.set(method.path, method as Method<unknown, unknown>);
  }

  /** Binds "host:port" (port 0 picks one) or "unix:/path"; returns the bound address. */
  async bind(address: string): Promise<string> {
    const target = listenTarget(address);
    const server = createServer({ maxSessionMemory: this.options.maxSessionMemoryMiB });
    server.on("connection", (socket: Socket) => this.onConnection(socket));
    server.on("session", (session) => this.onSession(session));
    server.on("stream", (stream, headers) => this.onStream(stream, headers));
    if ("path" in target && (await staleSocket(target.path))) unlinkSync(target.path);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      const listening = () => {
        server.off("error", reject);
        resolve();
      };
      if ("path" in target) server.listen(target.path, listening);
      else server.listen(target.port, target.host, listening);
    });
    server.on("error", (error) => this.options.onStreamError?.(error));
    this.servers.push(server);
    if ("path" in target) return address;
    const bound = server.address();
    const port = typeof bound === "object" && bound ? bound.port : target.port;
    return `${address.slice(0, address.lastIndexOf(":"))}:${port}`;
  }

  /** Stops accepting, lets calls in flight finish for up to graceMs, then closes what is left. */
  async shutdown(graceMs: number): Promise<void> {
    const serversClosed = this.servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())));
    // A session already closing (a rotated connection) may still carry calls: it too is waited for, up to the grace.
    const sessionsClosed = [...this.sessions].map((session) => new Promise<void>((resolve) => {
      if (session.destroyed) return resolve();
      session.once("close", () => resolve());
      if (!session.closed) session.close();
    }));
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.all(sessionsClosed), graceOver]);
    clearTimeout(timer);
    for (const session of this.sessions) session.destroy();
    // A peer that never ends its side (gone without a word) would hold server.close() forever.
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(serversClosed);
  }

  private onConnection(socket: Socket): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
  }

  private onSession(session: ServerHttp2Session): void {
    this.sessions.add(session);
    session.on("close", () => this.sessions.delete(session));
    session.on("error", (error) => this.options.onStreamError?.(error));
    const maxStreams = this.options.maxStreamsPerConnection;
    if (maxStreams > 0) rotateAfter(session, maxStreams, this.options.onRotate);
  }

  private onStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    stream.on("error", (error) => this.options.onStreamError?.(error));
    if (headers[":method"] !== "POST") return void stream.respond({ ":status": 405 }, HEADERS_ONLY);
    const contentType = headers["content-type"];
    if (typeof contentType !== "string" || !contentType.startsWith("application/grpc")) {
      return void stream.respond({ ":status": 415 }, HEADERS_ONLY);
    }
    const encoding = headers["grpc-encoding"];
    if (encoding !== undefined && encoding !== "identity") {
      return void stream.respond({ ...RESPONSE_HEADERS, ...statusTrailers(GrpcStatus.UNIMPLEMENTED, `grpc-encoding ${String(encoding)} is not supported`) }, HEADERS_ONLY);
    }
    const path = headers[":path"] ?? "";
    const method = this.methods.get(path);
    if (!method) {
      return void stream.respond({ ...RESPONSE_HEADERS, ...statusTrailers(GrpcStatus.UNIMPLEMENTED, `unknown method ${path}`) }, HEADERS_ONLY);
    }
    new Http2Call(stream, headers, method, this.options.maxReceiveMessageBytes, this.reportError);
  }
}

/**
 * Rotates a connection before Node's rapid-reset limit is reached. Envoy's default ext_proc close ends every
 * stream with RST_STREAM; nghttp2 (bundled by Node 20) answers ~1 000 resets on one connection with
 * GOAWAY(INTERNAL_ERROR), failing every stream in flight. After `maxStreams` streams we send the graceful
 * two-step GOAWAY that gRPC's max_connection_age uses: the client finishes what is in flight and reconnects.
 */
function rotateAfter(session: ServerHttp2Session, maxStreams: number, onRotate: () => void): void {
  let streams = 0;
  session.on("stream", () => {
    if (++streams !== maxStreams) return;
    onRotate();
    try {
      session.goaway(h2.NGHTTP2_NO_ERROR, 2 ** 31 - 1, ROTATION_GOAWAY_DATA);
    } catch {
      return; // already closing
    }
    const timer = setTimeout(() => {
      if (!session.closed && !session.destroyed) session.close();
    }, ROTATION_GRACE_MS);
    timer.unref();
  });
}
