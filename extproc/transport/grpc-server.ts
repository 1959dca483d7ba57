// A gRPC server on node:http2 for the few methods the sidecar serves (ext_proc Process, grpc.health.v1):
// routing by :path, one Call per stream, trailers, connection rotation and graceful shutdown. It replaces
// a general-purpose gRPC server because per-call overhead is most of what an ext_proc request costs.
import { existsSync, statSync, unlinkSync } from "node:fs";
import { connect } from "node:net";
import {
  constants as h2, createServer, type Http2Server, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream, type ServerStreamResponseOptions,
} from "node:http2";
import { splitHostPort } from "../host-port.js";
import { encodeGrpcMessage, frameMessage, GrpcError, GrpcStatus, type GrpcStatusCode, MessageReader } from "./grpc-wire.js";

/** What a method's handler sees of its call. */
export interface ServerCall<Res> {
  /** A request metadata value (an HTTP/2 request header), or undefined. */
  metadata(key: string): string | undefined;
  write(message: Res): void;
  /** Finishes the call with OK. */
  end(): void;
  /** Finishes the call with this status. */
  fail(code: GrpcStatusCode, details: string): void;
}

/** A call's events, in order: messages, then a half-close, a read error or a cancel. */
export interface CallHandler<Req> {
  onMessage(message: Req): void;
  onHalfClose(): void;
  /** The request could not be read (bad frame, undecodable message); the handler ends the call. */
  onReadError(error: GrpcError): void;
  onCancel(): void;
}

export interface Method<Req, Res> {
  /** "/package.Service/Method". */
  path: string;
  decode(bytes: Uint8Array): Req;
  encode(message: Res): Uint8Array;
  open(call: ServerCall<Res>): CallHandler<Req>;
}

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
const RESPONSE_HEADERS: OutgoingHttpHeaders = { ":status": 200, "content-type": "application/grpc" };
// No Date header: gRPC has no use for it, and Node formats and adds one to every response unless told not to
// (`sendDate` is read by Node's respond() though @types/node leaves it out).
const WITH_TRAILERS = { waitForTrailers: true, sendDate: false } as ServerStreamResponseOptions;
const HEADERS_ONLY = { endStream: true, sendDate: false } as ServerStreamResponseOptions;
const OK_TRAILERS: OutgoingHttpHeaders = { "grpc-status": "0" };

function statusTrailers(code: GrpcStatusCode, details: string): OutgoingHttpHeaders {
  return { "grpc-status": String(code), "grpc-message": encodeGrpcMessage(details) };
}

/** One gRPC call on one HTTP/2 stream. Prototype methods, not closures, beyond the four stream listeners. */
class Http2Call<Req, Res> implements ServerCall<Res> {
  private readonly reader: MessageReader;
  private readonly handler: CallHandler<Req>;
  private headersSent = false;
  private finished = false;
  private trailers = OK_TRAILERS;

  constructor(
    private readonly stream: ServerHttp2Stream,
    private readonly headers: IncomingHttpHeaders,
    private readonly method: Method<Req, Res>,
    maxMessageBytes: number,
    private readonly report: (error: Error) => void,
  ) {
    this.reader = new MessageReader(maxMessageBytes);
    this.handler = method.open(this);
    stream.on("data", (chunk: Buffer) => this.onData(chunk));
    stream.on("end", () => this.onEnd());
    stream.on("close", () => this.onClose());
    stream.on("wantTrailers", () => this.stream.sendTrailers(this.trailers));
  }

  metadata(key: string): string | undefined {
    const value = this.headers[key];
    return Array.isArray(value) ? value[0] : value;
  }

  write(message: Res): void {
    // Closed covers a reset that arrived before its 'close' event (a fault-delay timer may fire in between).
    if (this.finished || this.stream.destroyed || this.stream.closed) return;
    if (!this.headersSent) {
      this.headersSent = true;
      this.stream.respond(RESPONSE_HEADERS, WITH_TRAILERS);
    }
    this.stream.write(frameMessage(this.method.encode(message)));
  }

  end(): void {
    this.finish(OK_TRAILERS);
  }

  fail(code: GrpcStatusCode, details: string): void {
    this.finish(statusTrailers(code, details));
  }

  private finish(trailers: OutgoingHttpHeaders): void {
    if (this.finished) return;
    this.finished = true;
    if (this.stream.destroyed || this.stream.closed) return;
    if (this.headersSent) {
      this.trailers = trailers;
      this.stream.end();
    } else {
      // Trailers-Only: status in the one HEADERS frame.
      this.headersSent = true;
      this.stream.respond({ ...RESPONSE_HEADERS, ...trailers }, HEADERS_ONLY);
    }
  }

  private onData(chunk: Buffer): void {
    if (this.finished) return;
    let messages: Buffer[];
    try {
      messages = this.reader.push(chunk);
    } catch (error) {
      this.handler.onReadError(error instanceof GrpcError ? error : new GrpcError(GrpcStatus.INTERNAL, String(error)));
      return;
    }
    for (const bytes of messages) {
      let message: Req;
      try {
        message = this.method.decode(bytes);
      } catch (error) {
        this.handler.onReadError(new GrpcError(GrpcStatus.INVALID_ARGUMENT, `cannot decode the request message: ${(error as Error).message}`));
        return;
      }
      try {
        this.handler.onMessage(message);
      } catch (error) {
        // A bug in a handler fails its call, not the process (a listener's throw would be uncaught).
        this.report(error as Error);
        this.fail(GrpcStatus.INTERNAL, "the server failed to process the message");
        return;
      }
      if (this.finished) return;
    }
  }

  private onEnd(): void {
    // A reset (RST_STREAM) also ends the readable side, and Node reports the reset only after this event's
    // turn: decide once that turn is over, so a reset stream is a cancel, not a half-close.
    if (!this.finished) setImmediate(halfCloseLater, this);
  }

  halfClose(): void {
    if (this.finished) return;
    if (this.reader.bufferedBytes > 0) {
      this.handler.onReadError(new GrpcError(GrpcStatus.INTERNAL, `the request ended inside a message (${this.reader.bufferedBytes} bytes of it)`));
    } else this.handler.onHalfClose();
  }

  private onClose(): void {
    if (this.finished) return;
    this.finished = true;
    this.handler.onCancel();
  }
}

function halfCloseLater(call: Http2Call<unknown, unknown>): void {
  call.halfClose();
}

/**
 * A unary method: answers the one request message once the client half-closes, as gRPC requires
 * (a second message, or none, fails the call). `answer` throws a GrpcError to fail the call.
 */
export function unaryMethod<Req, Res>(path: string, codec: { decode(b: Uint8Array): Req; encode(m: Res): Uint8Array }, answer: (request: Req) => Res): Method<Req, Res> {
  return {
    path, ...codec,
    open(call: ServerCall<Res>): CallHandler<Req> {
      let request: Req | undefined;
      return {
        onMessage(message) {
          if (request !== undefined) return call.fail(GrpcStatus.UNIMPLEMENTED, "a unary call takes one request message");
          request = message;
        },
        onHalfClose() {
          if (request === undefined) return call.fail(GrpcStatus.UNIMPLEMENTED, "a unary call needs a request message");
          try {
            call.write(answer(request));
            call.end();
          } catch (error) {
            if (!(error instanceof GrpcError)) throw error;
            call.fail(error.code, error.details);
          }
        },
        onReadError: (error) => call.fail(error.code, error.details),
        onCancel() {},
      };
    },
  };
}

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

  private readonly reportError = (error: Error) => this.options.onHandlerError?.(error);

  constructor(private readonly options: GrpcServerOptions) {}

  add<Req, Res>(method: Method<Req, Res>): void {
    this.methods.set(method.path, method as Method<unknown, unknown>);
  }

  /** Binds "host:port" (port 0 picks one) or "unix:/path"; returns the bound address. */
  async bind(address: string): Promise<string> {
    const target = listenTarget(address);
    const server = createServer({ maxSessionMemory: this.options.maxSessionMemoryMiB });
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
    const sessionsClosed = [...this.sessions].map((session) => new Promise<void>((resolve) => {
      if (session.closed || session.destroyed) return resolve();
      session.once("close", () => resolve());
      session.close();
    }));
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.all(sessionsClosed), graceOver]);
    clearTimeout(timer);
    for (const session of this.sessions) session.destroy();
    await Promise.all(serversClosed);
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
