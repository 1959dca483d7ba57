// The transport baseline: a bare grpc-js ExternalProcessor that answers each message with the matching-kind
// reply (our generated ts-proto codecs, the sidecar's server options, the sidecar's end-of-call rule), no policy.
// Run: node dist/bench/echo-server.js [--listen 127.0.0.1:0]; prints {"msg":"listening","grpc":"host:port"}.
import { Server, ServerCredentials, type ServerDuplexStream } from "@grpc/grpc-js";
import {
  CommonResponse_ResponseStatus,
  ExternalProcessorService,
  type ProcessingRequest,
  type ProcessingResponse,
} from "../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";
import { ProcessingMode_BodySendMode, ProcessingMode_HeaderSendMode } from "../extproc/gen/envoy/extensions/filters/http/ext_proc/v3/processing_mode.js";

const common = { status: CommonResponse_ResponseStatus.CONTINUE, headerMutation: undefined, bodyMutation: undefined, trailers: undefined, clearRouteCache: false };

/** request_headers → continue and skip the response phase (what the sidecar answers an allowed request). */
const REQUEST_HEADERS_REPLY: ProcessingResponse = {
  response: { $case: "requestHeaders", requestHeaders: { response: common } },
  modeOverride: {
    requestHeaderMode: ProcessingMode_HeaderSendMode.DEFAULT,
    responseHeaderMode: ProcessingMode_HeaderSendMode.SKIP,
    requestBodyMode: ProcessingMode_BodySendMode.NONE,
    responseBodyMode: ProcessingMode_BodySendMode.NONE,
    requestTrailerMode: ProcessingMode_HeaderSendMode.DEFAULT,
    responseTrailerMode: ProcessingMode_HeaderSendMode.DEFAULT,
  },
} as ProcessingResponse;
const RESPONSE_HEADERS_REPLY = { response: { $case: "responseHeaders", responseHeaders: { response: common } } } as ProcessingResponse;

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
const server = new Server({ "grpc.max_receive_message_length": 16 * 1024 * 1024, "grpc.keepalive_permit_without_calls": 1, "grpc-node.max_session_memory": 64 });
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
