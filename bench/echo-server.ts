// The transport baseline: a bare grpc-js ExternalProcessor that answers each message with the matching-kind
// reply (our generated ts-proto codecs, the sidecar's limits, the sidecar's end-of-call rule), no policy.
// Run: node dist/bench/echo-server.js [--listen 127.0.0.1:0]; prints {"msg":"listening","grpc":"host:port"}.
import { Server, ServerCredentials, type ServerDuplexStream } from "@grpc/grpc-js";
import { ExternalProcessorService, type ProcessingRequest, type ProcessingResponse } from "../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";
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

const listen = process.argv[process.argv.indexOf("--listen") + 1] ?? "127.0.0.1:0";
const server = new Server({ ...SERVER_OPTIONS });
server.addService(ExternalProcessorService, { process: handle });
server.bindAsync(process.argv.includes("--listen") ? listen : "127.0.0.1:0", ServerCredentials.createInsecure(), (err, port) => {
  if (err) {
    console.error(err);
    process.exit(1);
  }
  console.log(JSON.stringify({ msg: "listening", grpc: `127.0.0.1:${port}` }));
});
const stop = () => {
  server.forceShutdown();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
