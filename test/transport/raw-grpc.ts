// A raw node:http2 client for the gRPC server tests (no gRPC library): one exchange of framed messages with its
// headers, trailers and status, and a bare GrpcServer on 127.0.0.1 serving one method.
import { connect, type ClientHttp2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http2";
import { GrpcServer, type GrpcServerOptions, type Method } from "../../extproc/transport/grpc-server.js";
import { decodeGrpcMessage, MessageReader } from "../../extproc/transport/grpc-wire.js";
import { PROCESS_PATH } from "../../extproc/transport/stream.js";

export interface Exchange {
  headers: IncomingHttpHeaders;
  trailers: IncomingHttpHeaders;
  messages: Buffer[];
  /** grpc-status from the trailers, or from the headers of a Trailers-Only response. */
  status?: number;
  details?: string;
}

/** One request on `session`: `chunks` written as separate DATA writes, then END_STREAM. */
export function exchange(session: ClientHttp2Session, chunks: Buffer[], headers: OutgoingHttpHeaders = {}): Promise<Exchange> {
  const req = session.request({ ":method": "POST", ":path": PROCESS_PATH, "content-type": "application/grpc", te: "trailers", ...headers });
  const reader = new MessageReader(1 << 24);
  const result: Exchange = { headers: {}, trailers: {}, messages: [] };
  req.on("response", (h) => (result.headers = h));
  req.on("trailers", (h) => (result.trailers = h));
  req.on("data", (chunk: Buffer) => result.messages.push(...reader.push(chunk)));
  for (const chunk of chunks) req.write(chunk);
  req.end();
  return new Promise((resolve, reject) => {
    req.on("error", reject);
    req.on("close", () => {
      const source = result.trailers["grpc-status"] !== undefined ? result.trailers : result.headers;
      if (source["grpc-status"] !== undefined) result.status = Number(source["grpc-status"]);
      if (source["grpc-message"] !== undefined) result.details = decodeGrpcMessage(String(source["grpc-message"]));
      resolve(result);
    });
  });
}

/** A bare GrpcServer serving `method` on 127.0.0.1, and a raw HTTP/2 session to it; both closed at teardown. */
export async function bareServer(t: { teardown(fn: () => unknown): void }, method: Method<Buffer, Buffer>, options: Partial<GrpcServerOptions> = {}) {
  const server = new GrpcServer({ maxReceiveMessageBytes: 1024, maxSessionMemoryMiB: 8, maxStreamsPerConnection: 0, onRotate() {}, ...options });
  server.add(method);
  const session = connect(`http://${await server.bind("127.0.0.1:0")}`);
  session.on("error", () => {});
  t.teardown(async () => {
    session.close();
    await server.shutdown(100);
  });
  return { server, session };
}
