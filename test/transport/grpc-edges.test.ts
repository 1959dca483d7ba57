// grpc edges › what a raw HTTP/2 client sees at the gRPC server's edges: listen addresses, content types and
// encodings, exact OK trailers, a call's events (close, cancel, writes after the end), handler bugs in every phase,
// connection rotation's GOAWAY, shutdown with idle sessions, and grpc-message escaping at its boundaries.
import test from "ava";
import { connect, constants as h2 } from "node:http2";
import { createServer as createNetServer } from "node:net";
import { encodeGrpcMessage, frameMessage, GrpcError, GrpcStatus, MessageReader } from "../../extproc/transport/grpc-wire.js";
import { GrpcServer, type Method } from "../../extproc/transport/grpc-server.js";
import { unaryMethod, type ServerCall } from "../../extproc/transport/grpc-call.js";
import { bareServer, exchange } from "./raw-grpc.js";

const PATH = "/test.Edges/Call";
const options = { maxReceiveMessageBytes: 1024, maxSessionMemoryMiB: 8, maxStreamsPerConnection: 0, onRotate() {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async (check: () => boolean, ms = 3000) => {
  for (const started = Date.now(); !check() && Date.now() - started < ms; ) await sleep(10);
  return check();
};

/** A method whose handler records its events and hands its call to `onOpen`; messages echo back unless told otherwise. */
function recording(onOpen: (call: ServerCall<Buffer>) => void = () => {}, echo = true) {
  const events: string[] = [];
  const method: Method<Buffer, Buffer> = {
    path: PATH, decode: (b) => Buffer.from(b), encode: (m) => m,
    open: (call) => {
      onOpen(call);
      return {
        onMessage: (m) => {
          events.push(`message ${String(m)}`);
          if (echo) call.write(m);
        },
        onHalfClose: () => {
          events.push("half-close");
          call.end();
        },
        onReadError: (e) => {
          events.push(`read error ${e.code}`);
          call.fail(e.code, e.details);
        },
        onCancel: () => events.push("cancel"),
        onClosed: () => events.push("closed"),
      };
    },
  };
  return { method, events };
}

test("grpc edges › given listen addresses that are not host:port, then bind refuses them by name; a valid one is not refused", async (t) => {
  // Given a server
  const server = new GrpcServer(options);
  t.teardown(() => server.shutdown(100));
  // When / then: no port, a word for a port, a negative port, a port above 65535
  for (const address of ["127.0.0.1", "127.0.0.1:http", "127.0.0.1:-1", "127.0.0.1:65536"]) {
    await t.throwsAsync(server.bind(address), { message: `gRPC listen address ${JSON.stringify(address)} is not host:port or unix:/path` });
  }
  // and the highest port is a listen address (bound, or in use on this machine, but never refused as malformed)
  const highest = await server.bind("127.0.0.1:65535").catch((e: Error) => e.message);
  t.notRegex(highest, /is not host:port/);
});

test("grpc edges › given a TCP port already in use, then bind rejects with EADDRINUSE on that port", async (t) => {
  // Given a port some other listener holds
  const other = createNetServer();
  await new Promise<void>((r) => other.listen(0, "127.0.0.1", r));
  t.teardown(() => other.close());
  const port = (other.address() as { port: number }).port;
  const server = new GrpcServer(options);
  t.teardown(() => server.shutdown(100));
  // When / then
  await t.throwsAsync(server.bind(`127.0.0.1:${port}`), { code: "EADDRINUSE" });
  // and a free port binds and answers on the address it returns
  t.regex(await server.bind("127.0.0.1:0"), /^127\.0\.0\.1:\d+$/);
});

test("grpc edges › given gRPC content types, encodings and no content type, then each is served or refused as gRPC says", async (t) => {
  // Given an echo method
  const { method } = recording();
  const { session } = await bareServer(t, method);
  const path = { ":path": PATH };
  // When / then: a suffixed gRPC content type and the identity encoding are served
  const proto = await exchange(session, [frameMessage(Buffer.from("a"))], { ...path, "content-type": "application/grpc+proto" });
  t.deepEqual(proto.messages.map(String), ["a"]);
  const identity = await exchange(session, [frameMessage(Buffer.from("b"))], { ...path, "grpc-encoding": "identity" });
  t.deepEqual(identity.messages.map(String), ["b"]);
  // gzip is refused by name
  const gzip = await exchange(session, [frameMessage(Buffer.from("c"))], { ...path, "grpc-encoding": "gzip" });
  t.is(gzip.status, GrpcStatus.UNIMPLEMENTED);
  t.is(gzip.details, "grpc-encoding gzip is not supported");
  // and a request with no content type at all is 415, not a crash
  const req = session.request({ ":method": "POST", ":path": PATH });
  req.end();
  const [status] = await new Promise<[unknown]>((resolve) => req.on("response", (h) => resolve([h[":status"]])));
  t.is(status, 415);
  t.deepEqual((await exchange(session, [frameMessage(Buffer.from("d"))], path)).messages.map(String), ["d"]);
});

test("grpc edges › given a call that ends OK, then its trailers say grpc-status \"0\" exactly, with no grpc-message", async (t) => {
  // Given an echo method
  const { method, events } = recording();
  const { session } = await bareServer(t, method);
  // When a call ends normally
  const ok = await exchange(session, [frameMessage(Buffer.from("x"))], { ":path": PATH });
  // Then the trailers carry the literal status 0
  t.is(ok.trailers["grpc-status"], "0");
  t.is(ok.trailers["grpc-message"], undefined);
  t.is(ok.headers["content-type"], "application/grpc");
  // and the handler saw the message, the half-close and a clean close, no cancel
  t.true(await until(() => events.includes("closed")));
  t.deepEqual(events, ["message x", "half-close", "closed"]);
});

test("grpc edges › given request metadata, then the handler reads it, the first value of a repeated one, undefined when absent", async (t) => {
  // Given a method that answers with the metadata it reads
  const read: (string | undefined)[] = [];
  const { method } = recording((call) => read.push(call.metadata("x-one"), call.metadata("x-missing")));
  const { session } = await bareServer(t, method);
  // When a call carries x-one
  await exchange(session, [frameMessage(Buffer.from("m"))], { ":path": PATH, "x-one": "1" });
  // Then it is read, and an absent key is undefined
  t.deepEqual(read, ["1", undefined]);
});

test("grpc edges › given a handler that ends the call on its first message, then later messages and writes are dropped", async (t) => {
  // Given a method that fails on the first message and then tries to write and fail again
  let call: ServerCall<Buffer> | undefined;
  const { method, events } = recording((c) => (call = c), false);
  const first: Method<Buffer, Buffer> = {
    ...method,
    open: (c) => {
      const handler = method.open(c);
      return { ...handler, onMessage: (m) => {
        handler.onMessage(m);
        c.fail(GrpcStatus.NOT_FOUND, "stop here");
        c.write(Buffer.from("late"));
        c.fail(GrpcStatus.INTERNAL, "a second status");
      } };
    },
  };
  const { session } = await bareServer(t, first);
  // When two messages arrive in one DATA write, then a third
  const result = await exchange(session, [Buffer.concat([frameMessage(Buffer.from("1")), frameMessage(Buffer.from("2"))]), frameMessage(Buffer.from("3"))], { ":path": PATH });
  // Then only the first reached the handler, the first status stands, and nothing was written after it
  t.is(result.status, GrpcStatus.NOT_FOUND);
  t.is(result.details, "stop here");
  t.deepEqual(result.messages, []);
  t.deepEqual(events.filter((e) => e.startsWith("message")), ["message 1"]);
  // and writing to the finished call later is a no-op, not a throw
  t.notThrows(() => call!.write(Buffer.from("later still")));
});

test("grpc edges › given a client that resets its stream with CANCEL mid-call, then the handler's last event is a cancel", async (t) => {
  // Given a method that keeps the call open until the half-close (and then ends it OK)
  let call: ServerCall<Buffer> | undefined;
  const { method, events } = recording((c) => (call = c), false);
  const { session } = await bareServer(t, method);
  // When the client sends a message and then closes the stream with CANCEL (node's client ends its side first)
  const req = session.request({ ":method": "POST", ":path": PATH, "content-type": "application/grpc", te: "trailers" });
  req.on("error", () => {});
  req.write(frameMessage(Buffer.from("hi")));
  t.true(await until(() => events.includes("message hi")));
  req.close(h2.NGHTTP2_CANCEL);
  // Then the handler is told of the cancel, even though it had ended the call, and not of a clean close
  t.true(await until(() => events.includes("cancel")));
  t.is(events.at(-1), "cancel");
  t.false(events.includes("closed"));
  // and a write after it neither throws nor adds anything
  t.notThrows(() => call!.write(Buffer.from("too late")));
  await sleep(50);
  t.is(events.at(-1), "cancel");
});

test("grpc edges › given a call the handler ended, then the client's reset with NO_ERROR (Envoy's close) is a clean close", async (t) => {
  // Given a method that answers the message and ends the call at once, without waiting for the half-close
  const events: string[] = [];
  const method: Method<Buffer, Buffer> = {
    path: PATH, decode: (b) => Buffer.from(b), encode: (m) => m,
    open: (call) => ({
      onMessage: (m) => {
        call.write(m);
        call.end();
      },
      onHalfClose: () => events.push("half-close"), onReadError() {},
      onCancel: () => events.push("cancel"), onClosed: () => events.push("closed"),
    }),
  };
  const { session } = await bareServer(t, method);
  // When the client resets with NO_ERROR after the reply
  const req = session.request({ ":method": "POST", ":path": PATH, "content-type": "application/grpc", te: "trailers" });
  req.on("error", () => {});
  req.write(frameMessage(Buffer.from("q")));
  await new Promise((r) => req.once("data", r));
  req.close(h2.NGHTTP2_NO_ERROR);
  // Then the handler sees a close, no cancel
  t.true(await until(() => events.length > 0));
  await sleep(50);
  t.deepEqual(events, ["closed"]);
});

test("grpc edges › given a unary method whose answer has a bug, then that call ends INTERNAL, reported, and the server keeps serving", async (t) => {
  // Given a unary method that throws a TypeError (not a GrpcError) for "bug" and a GrpcError for "refuse"
  const reported: string[] = [];
  const method = unaryMethod<Buffer, Buffer>(PATH, { decode: (b) => Buffer.from(b), encode: (m) => m }, (request) => {
    if (String(request) === "bug") throw new TypeError("answer bug");
    if (String(request) === "refuse") throw new GrpcError(GrpcStatus.INVALID_ARGUMENT, "not you");
    return request;
  });
  const { session } = await bareServer(t, method, { onHandlerError: (e) => reported.push(e.message) });
  // When / then: the bug fails only its own call, with a status that does not leak the bug
  const failed = await exchange(session, [frameMessage(Buffer.from("bug"))], { ":path": PATH });
  t.is(failed.status, GrpcStatus.INTERNAL);
  t.is(failed.details, "the server failed to process the message");
  t.deepEqual(reported, ["answer bug"]);
  // a GrpcError is the call's status
  const refused = await exchange(session, [frameMessage(Buffer.from("refuse"))], { ":path": PATH });
  t.is(refused.status, GrpcStatus.INVALID_ARGUMENT);
  t.is(refused.details, "not you");
  // an unreadable frame fails the unary call with the reader's status
  const compressed = frameMessage(Buffer.from("z"));
  compressed[0] = 1;
  const unreadable = await exchange(session, [compressed], { ":path": PATH });
  t.is(unreadable.status, GrpcStatus.INTERNAL);
  t.is(unreadable.details, "compressed message (flag 1) without a negotiated grpc-encoding");
  // and the server still answers
  t.deepEqual((await exchange(session, [frameMessage(Buffer.from("fine"))], { ":path": PATH })).messages.map(String), ["fine"]);
});

test("grpc edges › given a streaming handler that throws on a message, with no error reporter, then only that call fails", async (t) => {
  // Given a method that throws on "boom" and a server with no onHandlerError
  const method: Method<Buffer, Buffer> = {
    path: PATH, decode: (b) => Buffer.from(b), encode: (m) => m,
    open: (call) => ({
      onMessage: (m) => {
        if (String(m) === "boom") throw new Error("handler bug");
        call.write(m);
      },
      onHalfClose: () => call.end(), onReadError() {}, onCancel() {},
    }),
  };
  const { session } = await bareServer(t, method);
  // When / then
  const failed = await exchange(session, [frameMessage(Buffer.from("boom"))], { ":path": PATH });
  t.is(failed.status, GrpcStatus.INTERNAL);
  t.is(failed.details, "the server failed to process the message");
  t.deepEqual((await exchange(session, [frameMessage(Buffer.from("ok"))], { ":path": PATH })).messages.map(String), ["ok"]);
});

test("grpc edges › given maxStreamsPerConnection 3, then the third stream rotates the connection once with a graceful GOAWAY", async (t) => {
  // Given a server that rotates a connection after 3 streams
  const { method } = recording();
  let rotations = 0;
  const { session } = await bareServer(t, method, { maxStreamsPerConnection: 3, onRotate: () => rotations++ });
  const goaways: { code: number; lastStreamId: number; data: string }[] = [];
  session.on("goaway", (code, lastStreamId, data) => goaways.push({ code, lastStreamId, data: String(data ?? "") }));
  const closed = new Promise((r) => session.once("close", r));
  // When two calls run, then a third
  for (const m of ["1", "2"]) await exchange(session, [frameMessage(Buffer.from(m))], { ":path": PATH });
  t.is(rotations, 0);
  t.deepEqual(goaways, []);
  const third = await exchange(session, [frameMessage(Buffer.from("3"))], { ":path": PATH });
  // Then the third is still answered, the connection is rotated once with a graceful GOAWAY naming why
  t.deepEqual(third.messages.map(String), ["3"]);
  t.true(await until(() => goaways.length > 0));
  t.is(rotations, 1);
  t.deepEqual(goaways[0], { code: h2.NGHTTP2_NO_ERROR, lastStreamId: 2 ** 31 - 1, data: "meshext_max_streams_per_connection" });
  // and the server closes the connection about a second later
  const started = Date.now();
  await closed;
  t.true(Date.now() - started < 3000, `closed after ${Date.now() - started} ms`);
});

test("grpc edges › given idle sessions, open and already closed, when shut down with a long grace, then it returns at once", async (t) => {
  // Given a server with one session the client closed and one it keeps open and idle
  const server = new GrpcServer(options);
  server.add(recording().method);
  const address = await server.bind("127.0.0.1:0");
  const gone = connect(`http://${address}`);
  gone.on("error", () => {});
  await exchange(gone, [frameMessage(Buffer.from("1"))], { ":path": PATH });
  gone.close();
  await new Promise((r) => gone.once("close", r));
  const idle = connect(`http://${address}`);
  idle.on("error", () => {});
  t.teardown(() => idle.destroy());
  await exchange(idle, [frameMessage(Buffer.from("2"))], { ":path": PATH });
  // When it shuts down with 10 s of grace
  const started = Date.now();
  await server.shutdown(10_000);
  // Then nothing waits for the grace: no call is in flight
  t.true(Date.now() - started < 2000, `shutdown took ${Date.now() - started} ms`);
});

test("grpc edges › given '~' and the control characters around printable ASCII, then grpc-message keeps '~' and escapes the rest", (t) => {
  // Given the characters at the edges of the printable range
  // When / then: 0x1f and 0x7f are escaped, space and '~' are kept
  t.is(encodeGrpcMessage("\u001f ~\u007f"), "%1F ~%7F");
  // and the compressed-flag refusal names the flag
  const frame = frameMessage(Buffer.from("a"));
  frame[0] = 2;
  t.throws(() => new MessageReader(1024).push(frame), { instanceOf: GrpcError, message: /flag 2/ });
});
