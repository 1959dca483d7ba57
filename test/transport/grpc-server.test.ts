// grpc server › the sidecar's gRPC server seen from a raw node:http2 client (no gRPC library): routing,
// refusals with the status a gRPC client expects, unreadable messages, split frames, Unix sockets, shutdown.
import test from "ava";
import { connect, type IncomingHttpHeaders } from "node:http2";
import { createServer as createNetServer } from "node:net";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessingRequest, ProcessingResponse } from "../../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";
import { HealthCheckRequest, HealthCheckResponse, HealthCheckResponse_ServingStatus } from "../../extproc/gen/health/v1/health.js";
import { GrpcServer, type Method } from "../../extproc/transport/grpc-server.js";
import { frameMessage, GrpcStatus, MessageReader } from "../../extproc/transport/grpc-wire.js";
import { PROCESS_PATH } from "../../extproc/transport/stream.js";
import { startTestSidecar } from "../helpers/sidecar-harness.js";
import { bareServer, exchange } from "./raw-grpc.js";

const requestHeaders = (path: string) => Buffer.from(ProcessingRequest.encode({
  request: { $case: "requestHeaders", requestHeaders: { headers: { headers: [{ key: ":path", value: "", rawValue: Buffer.from(path) }, { key: ":authority", value: "", rawValue: Buffer.from("svc") }] }, attributes: {}, endOfStream: true } },
  attributes: {}, observabilityMode: false,
} as ProcessingRequest).finish());

function counter(text: string, name: string, labels = ""): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name}${labels} `));
  return line ? Number(line.split(" ").pop()) : 0;
}

async function sidecarSession(t: { teardown(fn: () => unknown): void }) {
  const h = await startTestSidecar();
  const session = connect(`http://${h.grpcAddress}`);
  t.teardown(async () => {
    session.close();
    await h.stop();
  });
  return { h, session };
}

test("grpc server › given one request_headers message, then one reply, grpc-status 0 in trailers, content-type application/grpc", async (t) => {
  const { session } = await sidecarSession(t);
  const r = await exchange(session, [frameMessage(requestHeaders("/"))]);
  t.is(Number(r.headers[":status"]), 200);
  t.is(r.headers["content-type"], "application/grpc");
  t.is(r.messages.length, 1);
  t.is(ProcessingResponse.decode(r.messages[0]!).response?.$case, "requestHeaders");
  t.is(r.status, GrpcStatus.OK);
});

test("grpc server › given a message split into one-byte DATA writes, then it is read whole and answered", async (t) => {
  const { session } = await sidecarSession(t);
  const frame = frameMessage(requestHeaders("/split"));
  const r = await exchange(session, [...frame].map((b) => Buffer.from([b])));
  t.is(r.messages.length, 1);
  t.is(r.status, GrpcStatus.OK);
});

test("grpc server › given bytes that are not a ProcessingRequest, then INVALID_ARGUMENT for that stream only, counted, and the next stream is served", async (t) => {
  const { h, session } = await sidecarSession(t);
  // when a frame carries a truncated varint field (tag 0x12 = field 2, length 0x7f, no bytes)
  const bad = await exchange(session, [frameMessage(Buffer.from([0x12, 0x7f]))]);
  t.is(bad.status, GrpcStatus.INVALID_ARGUMENT);
  t.regex(bad.details ?? "", /cannot decode the request message/);
  t.is(bad.messages.length, 0);
  // then the same connection keeps serving
  const good = await exchange(session, [frameMessage(requestHeaders("/"))]);
  t.is(good.status, GrpcStatus.OK);
  const text = await (await fetch(`${h.adminUrl}/metrics`)).text();
  t.is(counter(text, "meshext_extproc_streams_failed_total", '{reason="invalid_argument"}'), 1);
});

test("grpc server › given a request that ends inside a message, then INTERNAL naming the truncation", async (t) => {
  const { session } = await sidecarSession(t);
  const r = await exchange(session, [frameMessage(requestHeaders("/")).subarray(0, 9)]);
  t.is(r.status, GrpcStatus.INTERNAL);
  t.regex(r.details ?? "", /ended inside a message/);
});

test("grpc server › given a compressed message or a grpc-encoding, then the call fails and nothing is decoded", async (t) => {
  const { session } = await sidecarSession(t);
  const frame = frameMessage(requestHeaders("/"));
  frame[0] = 1;
  t.is((await exchange(session, [frame])).status, GrpcStatus.INTERNAL);
  const gzip = await exchange(session, [frameMessage(requestHeaders("/"))], { "grpc-encoding": "gzip" });
  t.is(gzip.status, GrpcStatus.UNIMPLEMENTED);
  t.is(gzip.messages.length, 0);
});

test("grpc server › given an unknown method, a GET or a non-gRPC content-type, then UNIMPLEMENTED, 405 and 415", async (t) => {
  const { session } = await sidecarSession(t);
  const unknown = await exchange(session, [], { ":path": "/envoy.service.ext_proc.v3.ExternalProcessor/Nope" });
  t.is(Number(unknown.headers[":status"]), 200, "Trailers-Only: a gRPC status, not an HTTP error");
  t.is(unknown.status, GrpcStatus.UNIMPLEMENTED);
  t.regex(unknown.details ?? "", /unknown method/);
  const get = await new Promise<IncomingHttpHeaders>((resolve) => session.request({ ":method": "GET", ":path": PROCESS_PATH }).on("response", resolve).resume());
  t.is(Number(get[":status"]), 405);
  t.is(Number((await exchange(session, [], { "content-type": "application/json" })).headers[":status"]), 415);
});

test("grpc server › given a message above the receive limit, then RESOURCE_EXHAUSTED and the handler never sees it", async (t) => {
  // given a bare server with a 16-byte limit and a method that counts what reaches it
  let seen = 0;
  const echo: Method<Buffer, Buffer> = {
    path: "/test.Echo/Echo", decode: (b) => Buffer.from(b), encode: (m) => m,
    open: (call) => ({ onMessage: (m) => (seen++, call.write(m)), onHalfClose: () => call.end(), onReadError: (e) => call.fail(e.code, e.details), onCancel() {} }),
  };
  const { session } = await bareServer(t, echo, { maxReceiveMessageBytes: 16 });
  const small = await exchange(session, [frameMessage(Buffer.from("ok"))], { ":path": "/test.Echo/Echo" });
  t.deepEqual(small.messages.map(String), ["ok"]);
  // a message of exactly the limit is read and answered (the limit is inclusive)
  const exact = await exchange(session, [frameMessage(Buffer.from("x".repeat(16)))], { ":path": "/test.Echo/Echo" });
  t.is(exact.status, GrpcStatus.OK);
  t.deepEqual(exact.messages.map(String), ["x".repeat(16)]);
  const big = await exchange(session, [frameMessage(Buffer.alloc(17))], { ":path": "/test.Echo/Echo" });
  t.is(big.status, GrpcStatus.RESOURCE_EXHAUSTED);
  t.is(seen, 2);
});

test("grpc server › given a Unix socket path left by a dead process, then bind takes it over; one in use is refused", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "meshext-grpc-"));
  const server = new GrpcServer({ maxReceiveMessageBytes: 1024, maxSessionMemoryMiB: 8, maxStreamsPerConnection: 0, onRotate() {} });
  t.teardown(() => server.shutdown(100));
  // given a socket file nobody listens on: what a listener killed with SIGKILL leaves behind
  const stale = join(dir, "stale.sock");
  const dead = spawn(process.execPath, ["-e", `require("net").createServer().listen(${JSON.stringify(stale)}, () => console.log("up"))`]);
  await new Promise((r) => dead.stdout.once("data", r));
  dead.kill("SIGKILL");
  await new Promise((r) => dead.once("exit", r));
  t.true(existsSync(stale));
  t.is(await server.bind(`unix:${stale}`), `unix:${stale}`);
  // given a socket somebody accepts on, then bind fails instead of stealing it
  const live = join(dir, "live.sock");
  const other = createNetServer();
  await new Promise<void>((r) => other.listen(live, r));
  t.teardown(() => other.close());
  await t.throwsAsync(server.bind(`unix:${live}`), { code: "EADDRINUSE" });
  // given a path that is a regular file, then bind fails and the file is kept
  const file = join(dir, "file");
  writeFileSync(file, "data");
  await t.throwsAsync(server.bind(`unix:${file}`), { code: "EADDRINUSE" });
});

test("grpc server › given a call in flight, when shut down with grace, then it finishes with OK; past the grace it is cut", async (t) => {
  // given a method that answers only when told to
  const release: Array<() => void> = [];
  const held: Method<Buffer, Buffer> = {
    path: "/test.Held/Held", decode: (b) => Buffer.from(b), encode: (m) => m,
    open: (call) => ({ onMessage: (m) => release.push(() => (call.write(m), call.end())), onHalfClose() {}, onReadError() {}, onCancel() {} }),
  };
  const { server, session } = await bareServer(t, held);
  const graceful = exchange(session, [frameMessage(Buffer.from("a"))], { ":path": "/test.Held/Held" });
  const cut = exchange(session, [frameMessage(Buffer.from("b"))], { ":path": "/test.Held/Held" });
  cut.catch(() => {});
  while (release.length < 2) await new Promise((r) => setTimeout(r, 10));
  // when shutdown starts and the first call is answered within the grace
  const stopped = server.shutdown(300);
  release[0]!();
  t.is((await graceful).status, GrpcStatus.OK);
  // then the second, never answered, is cut when the grace ends
  const started = Date.now();
  await stopped;
  t.true(Date.now() - started < 1000);
  const outcome = await cut.then((r) => r.status, () => "reset");
  t.not(outcome, GrpcStatus.OK);
});

test("grpc server › given a unary health Check with two request messages or none, then UNIMPLEMENTED; with one, an answer", async (t) => {
  const { session } = await sidecarSession(t);
  const check = { ":path": "/grpc.health.v1.Health/Check" };
  const request = frameMessage(HealthCheckRequest.encode({ service: "" }).finish());
  const one = await exchange(session, [request], check);
  t.is(one.status, GrpcStatus.OK);
  t.is(HealthCheckResponse.decode(one.messages[0]!).status, HealthCheckResponse_ServingStatus.SERVING);
  const two = await exchange(session, [request, request], check);
  t.is(two.status, GrpcStatus.UNIMPLEMENTED);
  t.regex(two.details ?? "", /one request message/);
  const none = await exchange(session, [], check);
  t.is(none.status, GrpcStatus.UNIMPLEMENTED);
  t.regex(none.details ?? "", /needs a request message/);
});

test("grpc server › given a handler that throws, then that call ends INTERNAL, the error is reported, and the server keeps serving", async (t) => {
  // given a method whose handler throws on the message "boom"
  const reported: string[] = [];
  const fragile: Method<Buffer, Buffer> = {
    path: "/test.Fragile/Echo", decode: (b) => Buffer.from(b), encode: (m) => m,
    open: (call) => ({
      onMessage: (m) => {
        if (String(m) === "boom") throw new Error("handler bug");
        call.write(m);
      },
      onHalfClose: () => call.end(), onReadError() {}, onCancel() {},
    }),
  };
  const { session } = await bareServer(t, fragile, { onHandlerError: (e) => reported.push(e.message) });
  const path = { ":path": "/test.Fragile/Echo" };
  // when one call carries "boom"
  const failed = await exchange(session, [frameMessage(Buffer.from("boom"))], path);
  // then it ends INTERNAL without the handler's message, the error is reported, and the next call is answered
  t.is(failed.status, GrpcStatus.INTERNAL);
  t.notRegex(failed.details ?? "", /handler bug/);
  t.deepEqual(reported, ["handler bug"]);
  const ok = await exchange(session, [frameMessage(Buffer.from("fine"))], path);
  t.deepEqual(ok.messages.map(String), ["fine"]);
  t.is(ok.status, GrpcStatus.OK);
});

test("grpc server › given a health Watch half-closed without a request, then UNIMPLEMENTED; with one, the status streams", async (t) => {
  const { session } = await sidecarSession(t);
  const watch = { ":path": "/grpc.health.v1.Health/Watch" };
  const none = await exchange(session, [], watch);
  t.is(none.status, GrpcStatus.UNIMPLEMENTED);
  // given a watch with a request (the client keeps its side open, as watchers do)
  const req = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Watch", "content-type": "application/grpc", te: "trailers" });
  const reader = new MessageReader(1024);
  const first = new Promise<Buffer>((resolve) => req.on("data", (chunk: Buffer) => reader.push(chunk).forEach(resolve)));
  req.write(frameMessage(HealthCheckRequest.encode({ service: "" }).finish()));
  t.is(HealthCheckResponse.decode(await first).status, HealthCheckResponse_ServingStatus.SERVING);
  req.close();
});
