// Structured logs of the ext_proc service: one debug JSON line per decision, warnings with stream and request ids.
import test from "ava";
import { Writable } from "node:stream";
import { loadSidecarConfig } from "../../extproc/config/sidecar.js";
import { createLogger } from "../../extproc/log.js";
import { startSidecar } from "../../extproc/sidecar.js";
import { credentials } from "@grpc/grpc-js";
import { ExternalProcessorClient } from "../helpers/grpc-js-ext-proc.js";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";

function capture(): { lines: Array<Record<string, unknown>>; stream: Writable } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { lines, stream };
}

test("logs › each decision is one debug line naming the request; a bad message warns with stream and request ids", async (t) => {
  // given a sidecar logging at debug into memory
  const { lines, stream } = capture();
  const { config } = loadSidecarConfig(["--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--log-level", "debug"], {});
  const sidecar = await startSidecar(config, createLogger(config.logLevel, stream));
  t.teardown(() => sidecar.stop(200));
  const envoy = new EnvoyExtProcClient(sidecar.grpcAddress, { messageTimeoutMs: 3000 });
  t.teardown(() => envoy.close());

  // when one request is decided
  await envoy.request({ headers: [["x-request-id", "req-1"]] });
  await new Promise((r) => setTimeout(r, 50));

  // then exactly one "decision" line carries its request id, stream id, kind and action
  const decisions = lines.filter((l) => l.msg === "decision" && l.requestId === "req-1");
  t.is(decisions.length, 1);
  t.is(decisions[0]!.level, 20);
  t.truthy(decisions[0]!.streamId);
  t.is(decisions[0]!.action, "allow");
  t.is(decisions[0]!.kind, "none");

  // and when a second request_headers arrives on a stream, the warning names the stream and the request
  const client = new ExternalProcessorClient(sidecar.grpcAddress, credentials.createInsecure());
  t.teardown(() => client.close());
  const call = client.process();
  const ended = new Promise<number>((resolve) => call.on("status", (s) => resolve(s.code)));
  call.on("error", () => {});
  call.on("data", () => {});
  const headers = { headers: { headers: [{ key: "x-request-id", value: "", rawValue: Buffer.from("req-2") }] }, attributes: {}, endOfStream: false };
  call.write({ request: { $case: "requestHeaders", requestHeaders: headers }, attributes: {}, observabilityMode: false });
  call.write({ request: { $case: "requestHeaders", requestHeaders: headers }, attributes: {}, observabilityMode: false });
  t.is(await ended, 3);
  const warning = lines.find((l) => l.level === 40 && l.msg === "invalid ext_proc message");
  t.is(warning?.requestId, "req-2");
  t.truthy(warning?.streamId);
  t.regex(String(warning?.reason), /request_headers after request_headers/);
});
