// One gRPC call on one HTTP/2 stream as grpc-server.ts routes it: the Call a method's handler sees (messages
// in, messages and trailers out, status on failure), what a method is, and the unary-method helper.
import { constants as h2, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerHttp2Stream, type ServerStreamResponseOptions } from "node:http2";
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

/** A call's events, in order: messages, then a half-close, a read error or a cancel; last a cancel or a close. */
export interface CallHandler<Req> {
  onMessage(message: Req): void;
  onHalfClose(): void;
  /** The request could not be read (bad frame, undecodable message); the handler ends the call. */
  onReadError(error: GrpcError): void;
  /**
   * The client reset the stream (RST_STREAM with an error code such as CANCEL) before the call was over on both
   * sides — also after the handler ended the call, when the client cancelled before its own end of the stream.
   */
  onCancel(): void;
  /** The stream closed after the handler ended the call, with no reset: both sides ended it. */
  onClosed?(): void;
}

export interface Method<Req, Res> {
  /** "/package.Service/Method". */
  path: string;
  decode(bytes: Uint8Array): Req;
  encode(message: Res): Uint8Array;
  open(call: ServerCall<Res>): CallHandler<Req>;
}

export const RESPONSE_HEADERS: OutgoingHttpHeaders = { ":status": 200, "content-type": "application/grpc" };
// No Date header: gRPC has no use for it, and Node formats and adds one to every response unless told not to
// (`sendDate` is read by Node's respond() though @types/node leaves it out).
const WITH_TRAILERS = { waitForTrailers: true, sendDate: false } as ServerStreamResponseOptions;
export const HEADERS_ONLY = { endStream: true, sendDate: false } as ServerStreamResponseOptions;
const OK_TRAILERS: OutgoingHttpHeaders = { "grpc-status": "0" };

export function statusTrailers(code: GrpcStatusCode, details: string): OutgoingHttpHeaders {
  return { "grpc-status": String(code), "grpc-message": encodeGrpcMessage(details) };
}

/** One gRPC call on one HTTP/2 stream. Prototype methods, not closures, beyond the four stream listeners. */
export class Http2Call<Req, Res> implements ServerCall<Res> {
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
      return;
    }
    try {
      this.handler.onHalfClose();
    } catch (error) {
      // As in onData: a handler's bug fails its call; thrown from this setImmediate it would end the process.
      this.report(error as Error);
      this.fail(GrpcStatus.INTERNAL, "the server failed to process the message");
    }
  }

  private onClose(): void {
    if (this.finished) {
      // Ended by the handler: a clean close (both sides ended the stream) or a reset that came first. A reset
      // with NO_ERROR is a close too (Envoy's END_STREAM + RST_STREAM after the last reply).
      if (this.stream.rstCode !== undefined && this.stream.rstCode !== h2.NGHTTP2_NO_ERROR) this.handler.onCancel();
      else this.handler.onClosed?.();
      return;
    }
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
