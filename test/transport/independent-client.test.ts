// A client written without our code: @grpc/proto-loader reads Envoy's published .proto files
// (from @grpc/grpc-js-xds) and grpc.health.v1, and talks to the real sidecar over TCP.
import test from "ava";
import { credentials, loadPackageDefinition, Metadata, type Client, type ClientDuplexStream, type ServiceClientConstructor } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { startTestSidecar } from "../helpers/sidecar-harness.js";

const require = createRequire(import.meta.url);
const XDS_DEPS = join(dirname(require.resolve("@grpc/grpc-js-xds/package.json")), "deps");
const HEALTH_PROTO = join(dirname(require.resolve("grpc-health-check/package.json")), "proto/health/v1/health.proto");

const LOADER = { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true };
const extProcPkg = loadPackageDefinition(
  loadSync("envoy/service/ext_proc/v3/external_processor.proto", {
    ...LOADER,
    includeDirs: ["envoy-api", "xds", "googleapis", "protoc-gen-validate"].map((d) => join(XDS_DEPS, d)),
  }),
) as unknown as { envoy: { service: { ext_proc: { v3: { ExternalProcessor: ServiceClientConstructor } } } } };
const healthPkg = loadPackageDefinition(loadSync(HEALTH_PROTO, LOADER)) as unknown as { grpc: { health: { v1: { Health: ServiceClientConstructor } } } };

type Msg = Record<string, unknown>;

/** Sends messages one at a time on one stream, collecting each reply (or the final status). */
async function converse(client: Client, messages: Msg[]): Promise<{ replies: Msg[]; status: { code: number; details: string } }> {
  const call = (client as unknown as { Process(md: Metadata): ClientDuplexStream<Msg, Msg> }).Process(new Metadata());
  const replies: Msg[] = [];
  const status = new Promise<{ code: number; details: string }>((resolve) => call.on("status", resolve));
  call.on("error", () => {});
  let resolveNext: (() => void) | undefined;
  call.on("data", (m: Msg) => {
    replies.push(m);
    resolveNext?.();
  });
  for (const m of messages) {
    const got = new Promise<void>((r) => (resolveNext = r));
    call.write(m);
    await Promise.race([got, status]);
  }
  call.end();
  return { replies, status: await status };
}

const hdrs = (pairs: Array<[string, string]>) => ({ headers: pairs.map(([key, v]) => ({ key, raw_value: Buffer.from(v) })) });

test("independent client › every phase gets a single, well-formed reply of the matching kind", async (t) => {
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  // given a decision that keeps the response phase (so all six phases are exchanged)
  h.sidecar.setDecider({ decide: () => ({ type: "continue", responseHeaders: { set: [["x-by", "meshext"]], add: [], remove: [] }, explain: { action: "allow", kind: "MeshHTTPRoute", reason: "t" } }) });
  const client = new extProcPkg.envoy.service.ext_proc.v3.ExternalProcessor(h.grpcAddress, credentials.createInsecure());
  t.teardown(() => client.close());

  const { replies, status } = await converse(client, [
    { request_headers: { ...{ headers: hdrs([[":method", "POST"], [":path", "/a"], [":authority", "svc"]]) }, end_of_stream: false } },
    { request_body: { body: Buffer.from("x"), end_of_stream: false } },
    { request_trailers: { trailers: hdrs([["x-t", "1"]]) } },
    { response_headers: { headers: hdrs([[":status", "200"]]), end_of_stream: false } },
    { response_body: { body: Buffer.from("y"), end_of_stream: false } },
    { response_trailers: { trailers: hdrs([["x-rt", "1"]]) } },
  ]);

  t.deepEqual(replies.map((r) => r.response), ["request_headers", "request_body", "request_trailers", "response_headers", "response_body", "response_trailers"]);
  const setHeaders = ((replies[3]!.response_headers as Msg).response as Msg).header_mutation as { set_headers: Array<{ header: { key: string; value?: string; raw_value: Buffer } }> };
  t.is(setHeaders.set_headers[0]!.header.key, "x-by");
  t.is(setHeaders.set_headers[0]!.header.raw_value.toString(), "meshext");
  t.falsy(setHeaders.set_headers[0]!.header.value, "values travel in raw_value only");
  t.is(status.code, 0);
});

test("independent client › a message with no oneof gets INVALID_ARGUMENT and the server keeps serving", async (t) => {
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  const client = new extProcPkg.envoy.service.ext_proc.v3.ExternalProcessor(h.grpcAddress, credentials.createInsecure());
  t.teardown(() => client.close());

  const bad = await converse(client, [{ observability_mode: false }]);
  t.is(bad.status.code, 3);
  t.regex(bad.status.details, /no request set/);

  const good = await converse(client, [{ request_headers: { headers: hdrs([[":path", "/"]]), end_of_stream: true } }]);
  t.is(good.replies.length, 1);
  t.is(good.replies[0]!.response, "request_headers");
  t.is(good.status.code, 0);
});

test("independent client › health answers SERVING for both names and NOT_FOUND for others", async (t) => {
  const h = await startTestSidecar();
  t.teardown(() => h.stop());
  const health = new healthPkg.grpc.health.v1.Health(h.grpcAddress, credentials.createInsecure());
  t.teardown(() => health.close());
  const check = (service: string) =>
    new Promise<{ err: { code: number } | null; res?: { status: string } }>((resolve) =>
      (health as unknown as { Check(r: Msg, cb: (e: { code: number } | null, r?: { status: string }) => void): void }).Check({ service }, (err, res) => resolve({ err, res })),
    );
  t.is((await check("")).res?.status, "SERVING");
  t.is((await check("envoy.service.ext_proc.v3.ExternalProcessor")).res?.status, "SERVING");
  t.is((await check("nope")).err?.code, 5);

  // when readiness drops (as the drain controller does), then Check and Watch say NOT_SERVING
  const seen: string[] = [];
  const watch = (health as unknown as { Watch(r: Msg): NodeJS.EventEmitter & { cancel(): void } }).Watch({ service: "" });
  watch.on("data", (r: { status: string }) => seen.push(r.status));
  watch.on("error", () => {});
  await new Promise((r) => setTimeout(r, 100));
  h.sidecar.readiness.set("draining", "draining");
  await new Promise((r) => setTimeout(r, 100));
  watch.cancel();
  t.is((await check("")).res?.status, "NOT_SERVING");
  t.deepEqual(seen, ["SERVING", "NOT_SERVING"]);
  t.is((await fetch(`${h.adminUrl}/ready`)).status, 503);
});
