// A stream the client cancels (Envoy resets it: a downstream gone away) is counted as cancelled, not as an OK end.
import test from "ava";
import { credentials, Metadata } from "@grpc/grpc-js";
import type { ProcessingResponse } from "../../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";
import { ExternalProcessorClient } from "../helpers/grpc-js-ext-proc.js";
import { startTestSidecar } from "../helpers/sidecar-harness.js";

function counter(text: string, name: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(" ").pop()) : NaN;
}

test("cancel › a stream cancelled after its first reply is counted as cancelled, not ended", async (t) => {
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  // given a decision that keeps the stream open for the response phase
  h.sidecar.setDecider({ decide: () => ({ type: "continue", responseHeaders: { set: [], add: [], remove: ["server"] }, explain: { action: "allow", kind: "MeshHTTPRoute", reason: "t" } }) });
  const client = new ExternalProcessorClient(h.grpcAddress, credentials.createInsecure());
  t.teardown(() => client.close());

  for (let i = 0; i < 3; i++) {
    // when the client sends request_headers, gets its reply, then cancels the stream
    const call = client.process(new Metadata());
    call.on("error", () => {});
    const replied = new Promise<ProcessingResponse>((resolve) => call.once("data", resolve));
    call.write({
      request: { $case: "requestHeaders", requestHeaders: { headers: { headers: [{ key: ":path", value: "", rawValue: Buffer.from("/") }, { key: ":authority", value: "", rawValue: Buffer.from("svc") }] }, attributes: {}, endOfStream: true } },
      metadataContext: undefined,
      attributes: {},
      observabilityMode: false,
      protocolConfig: undefined,
    } as never);
    await replied;
    call.cancel();
  }
  await new Promise((r) => setTimeout(r, 200));

  // then every stream is counted as cancelled and none as ended
  const text = await (await fetch(`${h.adminUrl}/metrics`)).text();
  t.is(counter(text, "meshext_extproc_streams_opened_total"), 3);
  t.is(counter(text, "meshext_extproc_streams_cancelled_total"), 3);
  t.is(counter(text, "meshext_extproc_streams_ended_total"), 0);
});
