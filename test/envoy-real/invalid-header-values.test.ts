// What a real Envoy does with a header edit whose value holds CR, LF or NUL, as a policy with such a value would make
// the sidecar send (the policy validation now refuses those: test/policy/validate.test.ts). The replies come from a
// stand-in ext_proc server built on the sidecar's own reply mapping (extproc/transport/mapping.ts), since the real
// sidecar no longer loads such a policy.
import test from "ava";
import { Server, ServerCredentials, type ServerDuplexStream } from "@grpc/grpc-js";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Echo } from "../helpers/envoy-stack.js";
import { startEnvoyStack } from "../helpers/envoy-stack.js";
import { ExternalProcessorService } from "../helpers/grpc-js-ext-proc.js";
import { rawRequest } from "../helpers/envoy-policies.js";
import { headerMapToMap } from "../../extproc/transport/headers.js";
import { continueRequestHeaders, continueResponseHeaders, immediateResponse } from "../../extproc/transport/mapping.js";
import type { ProcessingRequest, ProcessingResponse } from "../../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";

const BAD_VALUES: Record<string, string> = { cr: "a\rb", lf: "a\nb", crlf: "a\r\nx-injected: yes", nul: "a\0b" };

/** Request header x-case picks the edit: `<kind>` a request-header edit, `local-<kind>` a 429 carrying the header
 * (`local-clean`: a clean value); anything else a clean edit. */
function reply(msg: ProcessingRequest): ProcessingResponse {
  if (msg.request?.$case === "responseHeaders") return continueResponseHeaders(undefined);
  if (msg.request?.$case !== "requestHeaders") throw new Error(`unexpected ${msg.request?.$case}`);
  const which = headerMapToMap(msg.request.requestHeaders.headers).get("x-case") ?? "";
  const local = which.startsWith("local-");
  const bad = BAD_VALUES[local ? which.slice("local-".length) : which];
  if (local) {
    return immediateResponse({ type: "respond", status: 429, body: "local_rate_limited", headers: [["x-note", bad ?? "clean"], ["retry-after", "1"]], explain: { action: "rate-limit", kind: "MeshRateLimit", reason: "test" } }, false, false);
  }
  const edits = bad !== undefined ? { set: [["x-ok", "1"], ["x-note", bad]] as Array<[string, string]>, add: [], remove: [] } : { set: [["x-ok", "1"]] as Array<[string, string]>, add: [], remove: [] };
  return continueRequestHeaders(edits, true);
}

async function startStandIn(t: Parameters<typeof startEnvoyStack>[0]): Promise<{ grpc: string; admin: string }> {
  const server = new Server();
  server.addService(ExternalProcessorService as never, {
    process: (call: ServerDuplexStream<ProcessingRequest, ProcessingResponse>) => {
      call.on("data", (msg: ProcessingRequest) => call.write(reply(msg)));
      call.on("end", () => call.end());
      call.on("error", () => {});
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  // The wasm drain filter polls the sidecar admin: a stand-in that says "serving, no drain"
  const admin = createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end('{"draining":false}'));
  await new Promise<void>((resolve) => admin.listen(0, "127.0.0.1", resolve));
  t.teardown(() => {
    server.forceShutdown();
    admin.closeAllConnections();
    admin.close();
  });
  return { grpc: `127.0.0.1:${port}`, admin: `127.0.0.1:${(admin.address() as AddressInfo).port}` };
}

test.serial("real envoy › invalid header values: an edit whose value holds CR, LF or NUL fails the whole request with 500; the rest of the edit is lost too", async (t) => {
  // Given a real Envoy whose ext_proc server sends a request-header edit with a CR, LF, CRLF or NUL in one value
  const sidecarAddresses = await startStandIn(t);
  const stack = await startEnvoyStack(t, { sidecarAddresses });
  if (!stack) return;
  // When a request gets a clean edit
  const clean = await rawRequest(stack.inboundPort, "/", { "x-case": "none" });
  // Then it is served with the edit applied
  t.is(clean.status, 200);
  t.is((JSON.parse(clean.body) as Echo).headers["x-ok"], "1");
  // When requests get an edit with each bad character
  for (const kind of Object.keys(BAD_VALUES)) {
    const res = await rawRequest(stack.inboundPort, "/", { "x-case": kind });
    // Then each is Envoy's 500: the app never sees it, not even without the bad header
    t.is(res.status, 500, kind);
    t.is(res.headers["x-injected"], undefined, kind);
  }
  t.is(stack.app.served, 1);
  // and Envoy counts each failed mutation once in rejected_header_mutations (as if dropped, though it failed the request)
  const stats = await stack.envoy.stats("ext_proc");
  t.is(stats.get("http.inbound.ext_proc.rejected_header_mutations"), Object.keys(BAD_VALUES).length);
});

test.serial("real envoy › invalid header values: on a local reply, one value with CR, LF or NUL loses every header of the reply, not the reply", async (t) => {
  // Given a real Envoy whose ext_proc server answers 429 with one header value holding a bad character
  const sidecarAddresses = await startStandIn(t);
  const stack = await startEnvoyStack(t, { sidecarAddresses });
  if (!stack) return;
  // When a request gets a local reply with clean headers
  const clean = await rawRequest(stack.inboundPort, "/", { "x-case": "local-clean" });
  // Then it carries them
  t.is(clean.status, 429);
  t.is(clean.headers["x-note"], "clean");
  t.is(clean.headers["retry-after"], "1");
  for (const kind of Object.keys(BAD_VALUES)) {
    // When a request gets that local reply with a bad value
    const res = await rawRequest(stack.inboundPort, "/", { "x-case": `local-${kind}` });
    // Then the 429 still goes out, but without any of its headers: not the bad one, not one injected through it,
    // and not the good retry-after next to it
    t.is(res.status, 429, kind);
    t.is(res.body, "local_rate_limited", kind);
    t.is(res.headers["x-injected"], undefined, kind);
    t.is(res.headers["x-note"], undefined, kind);
    t.is(res.headers["retry-after"], undefined, kind);
  }
  t.is(stack.app.served, 0);
});
