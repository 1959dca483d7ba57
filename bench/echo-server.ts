// The transport baseline: a bare grpc-js ExternalProcessor that answers each message with the matching-kind
// reply (our generated ts-proto codecs, the sidecar's limits, the sidecar's end-of-call rule), no policy.
// With --transport meshext the same echo runs on the sidecar's own gRPC server (extproc/transport/grpc-server.ts):
// the floor of what the sidecar's transport costs, to tell transport cost from policy cost.
// Run: node dist/bench/echo-server.js [--listen 127.0.0.1:0] [--transport grpc-js|meshext]; prints {"msg":"listening","grpc":"host:port"}.
import { Server, ServerCredentials, type ServerDuplexStream } from "@grpc/grpc-js";
import { ExternalProcessorService, ProcessingRequest, ProcessingResponse } from "../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";
import { GrpcServer, type ServerCall } from "../extproc/transport/grpc-server.js";
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

function handle(call: ServerDuplexStream<ProcessingRequest, ProcessingResponse>): void {
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    call.end();
  };
  call.on("data", (msg: ProcessingRequest) => {
    if (done) return;
    const req = msg.request;
    if (req?.$case === "requestHeaders") {
      call.write(REQUEST_HEADERS_REPLY);
      if (req.requestHeaders.endOfStream) finish();
    } else if (req?.$case === "responseHeaders") {
      call.write(RESPONSE_HEADERS_REPLY);
      finish();
    }
  });
  call.on("end", finish);
  call.on("cancelled", () => {
    done = true;
  });
  call.on("error", () => {
    done = true;
  });
}

/** The same echo on the sidecar's transport. */
function openEcho(call: ServerCall<ProcessingResponse>) {
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    call.end();
  };
  return {
    onMessage(msg: ProcessingRequest) {
      if (done) return;
      const req = msg.request;
      if (req?.$case === "requestHeaders") {
        call.write(REQUEST_HEADERS_REPLY);
        if (req.requestHeaders.endOfStream) finish();
      } else if (req?.$case === "responseHeaders") {
        call.write(RESPONSE_HEADERS_REPLY);
        finish();
      }
    },
    onHalfClose: finish,
    onReadError: () => (done = true),
    onCancel: () => (done = true),
  };
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
  server.add({ path: PROCESS_PATH, decode: (b) => ProcessingRequest.decode(b), encode: (m: ProcessingResponse) => ProcessingResponse.encode(m).finish(), open: openEcho });
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
