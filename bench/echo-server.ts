// The transport baseline: a bare grpc-js ExternalProcessor that answers each message with the matching-kind
// reply (our generated ts-proto codecs, the sidecar's limits, the sidecar's end-of-call rule), no policy.
// With --transport meshext the same echo runs on the sidecar's own gRPC server (extproc/transport/grpc-server.ts):
// the floor of what the sidecar's transport costs, to tell transport cost from policy cost.
// Run: node dist/bench/echo-server.js [--listen 127.0.0.1:0] [--transport grpc-js|meshext]; prints {"msg":"listening","grpc":"host:port"}.
import { Server, ServerCredentials, type ServerDuplexStream } from "@grpc/grpc-js";
import { ProcessingRequest, ProcessingResponse } from "../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";
import { ExternalProcessorService } from "../test/helpers/grpc-js-ext-proc.js";
import { type CallHandler, GrpcServer } from "../extproc/transport/grpc-server.js";
import { PROCESS_PATH } from "../extproc/transport/stream.js";
import { continueRequestHeaders, continueResponseHeaders } from "../extproc/transport/mapping.js";
import { MAX_RECEIVE_MESSAGE_BYTES, MAX_SESSION_MEMORY_MIB } from "../extproc/transport/server.js";

/** The sidecar's own reply builders for an allowed request with no edits (built once, like the sidecar's). */
const REQUEST_HEADERS_REPLY = continueRequestHeaders(undefined, true);
const RESPONSE_HEADERS_REPLY = continueResponseHeaders(undefined);

/** The sidecar's limits, as grpc-js options; keepalive pings from Envoy's long-lived connection are allowed. */
const SERVER_OPTIONS = {
  "grpc.max_receive_message_length": MAX_RECEIVE_MESSAGE_BYTES,
  "grpc.keepalive_permit_without_calls": 1,
  "grpc-node.max_session_memory": MAX_SESSION_MEMORY_MIB,
} as const;

/**
 * One call's echo, on either transport: the matching-kind reply to each headers message, then the end of the call
 * as the sidecar ends it (right after a request_headers with end_of_stream, after response_headers, or on half-close).
 */
class EchoCall implements CallHandler<ProcessingRequest> {
  private done = false;

  constructor(private readonly call: { write(reply: ProcessingResponse): void; end(): void }) {}

  onMessage(msg: ProcessingRequest): void {
    if (this.done) return;
    const req = msg.request;
    if (req?.$case === "requestHeaders") {
      this.call.write(REQUEST_HEADERS_REPLY);
      if (req.requestHeaders.endOfStream) this.onHalfClose();
    } else if (req?.$case === "responseHeaders") {
      this.call.write(RESPONSE_HEADERS_REPLY);
      this.onHalfClose();
    }
  }

  onHalfClose(): void {
    if (this.done) return;
    this.done = true;
    this.call.end();
  }

  onReadError(): void {
    this.done = true;
  }

  onCancel(): void {
    this.done = true;
  }
}

function handle(call: ServerDuplexStream<ProcessingRequest, ProcessingResponse>): void {
  const echo = new EchoCall(call);
  call.on("data", (msg: ProcessingRequest) => echo.onMessage(msg));
  call.on("end", () => echo.onHalfClose());
  call.on("cancelled", () => echo.onCancel());
  call.on("error", () => echo.onCancel());
}

function startGrpcJs(address: string): { stop(): void } {
  const server = new Server({ ...SERVER_OPTIONS });
  server.addService(ExternalProcessorService, { process: handle });
  server.bindAsync(address, ServerCredentials.createInsecure(), (err, port) => {
    if (err) {
      console.error(err);
      process.exit(1);
    }
    console.log(JSON.stringify({ msg: "listening", grpc: `127.0.0.1:${port}` }));
  });
  return { stop: () => server.forceShutdown() };
}

function startMeshext(address: string): { stop(): void } {
  const server = new GrpcServer({ maxReceiveMessageBytes: MAX_RECEIVE_MESSAGE_BYTES, maxSessionMemoryMiB: MAX_SESSION_MEMORY_MIB, maxStreamsPerConnection: 0, onRotate() {} });
  server.add({ path: PROCESS_PATH, decode: (b) => ProcessingRequest.decode(b), encode: (m: ProcessingResponse) => ProcessingResponse.encode(m).finish(), open: (call) => new EchoCall(call) });
  server.bind(address).then(
    (bound) => console.log(JSON.stringify({ msg: "listening", grpc: bound })),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
  return { stop: () => void server.shutdown(0) };
}

const arg = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const address = arg("--listen") ?? "127.0.0.1:0";
const transport = arg("--transport") ?? "grpc-js";
if (transport !== "grpc-js" && transport !== "meshext") {
  console.error(`echo-server: --transport must be grpc-js or meshext, not ${JSON.stringify(transport)}`);
  process.exit(2);
}
const server = transport === "meshext" ? startMeshext(address) : startGrpcJs(address);
const stop = () => {
  server.stop();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
