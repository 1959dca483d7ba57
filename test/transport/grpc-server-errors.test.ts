// grpc server errors › grpc-server.ts at its edges: a listen address with no colon, the port closed after
// shutdown, a busy Unix socket not taken for a stale one, the session memory cap refusing new calls, and HTTP/2
// session and stream errors reported to onStreamError (and harmless without one).
import test from "ava";
import { connect as h2connect, constants as h2 } from "node:http2";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { connect, createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { frameMessage } from "../../extproc/transport/grpc-wire.js";
import { GrpcServer, type GrpcServerOptions, type Method } from "../../extproc/transport/grpc-server.js";
import { bareServer, exchange } from "./raw-grpc.js";

const PATH = "/test.Errors/Call";
const options = { maxReceiveMessageBytes: 1024, maxSessionMemoryMiB: 8, maxStreamsPerConnection: 0, onRotate() {} };
const echo: Method<Buffer, Buffer> = {
  path: PATH, decode: (b) => Buffer.from(b), encode: (m) => m,
  open: (call) => ({ onMessage: (m) => call.write(m), onHalfClose: () => call.end(), onReadError() {}, onCancel() {} }),
};

/** Polls `check` every 10 ms until it holds or `ms` pass. */
async function until(check: () => boolean, ms = 3000): Promise<boolean> {
  for (const started = Date.now(); !check() && Date.now() - started < ms; ) await new Promise((r) => setTimeout(r, 10));
  return check();
}

async function started(t: { teardown(fn: () => unknown): void }, extra: Partial<GrpcServerOptions> = {}) {
  const server = new GrpcServer({ ...options, ...extra });
  server.add(echo);
  const address = await server.bind("127.0.0.1:0");
  t.teardown(() => server.shutdown(100));
  return { server, address, port: Number(address.slice(address.lastIndexOf(":") + 1)) };
}

/** Writes bytes that are not an HTTP/2 preface on a TCP connection to `port`. */
function garbage(port: number): void {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => {});
  socket.end("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
}

/** Opens a call on `address` and resets it with `code` once its message is sent. */
async function resetCall(address: string, code: number): Promise<void> {
  const session = h2connect(`http://${address}`);
  session.on("error", () => {});
  const req = session.request({ ":method": "POST", ":path": PATH, "content-type": "application/grpc", te: "trailers" });
  req.on("error", () => {});
  req.write(frameMessage(Buffer.from("x")), () => req.close(code));
  await new Promise((r) => req.once("close", r));
  session.close();
}

test("grpc server errors › given a listen address that is a bare port with no colon, then bind refuses it as not host:port", async (t) => {
  // Given a server
  const server = new GrpcServer(options);
  t.teardown(() => server.shutdown(100));
  // When / then: a number alone is not taken for host "909" and port 9090
  await t.throwsAsync(server.bind("9090"), { message: 'gRPC listen address "9090" is not host:port or unix:/path' });
});

test("grpc server errors › given a server shut down, then its port no longer accepts connections", async (t) => {
  // Given a server that has served a call
  const server = new GrpcServer(options);
  server.add(echo);
  const address = await server.bind("127.0.0.1:0");
  const session = h2connect(`http://${address}`);
  session.on("error", () => {});
  t.deepEqual((await exchange(session, [frameMessage(Buffer.from("a"))], { ":path": PATH })).messages.map(String), ["a"]);
  session.close();
  // When it shuts down
  await server.shutdown(100);
  // Then a new connection to its port is refused
  const port = Number(address.slice(address.lastIndexOf(":") + 1));
  const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once("error", resolve);
  });
  t.is(error?.code, "ECONNREFUSED");
});

test("grpc server errors › given a peer that does not speak HTTP/2, then its session error goes to onStreamError", async (t) => {
  // Given a server collecting stream errors
  const errors: string[] = [];
  const { port } = await started(t, { onStreamError: (e) => errors.push(e.message) });
  // When a peer sends an HTTP/1.1 request instead of the HTTP/2 preface
  garbage(port);
  // Then the session's protocol error is reported
  t.true(await until(() => errors.length > 0));
  t.deepEqual(errors, ["Received bad client magic byte string"]);
});

test("grpc server errors › given a client that resets a call with INTERNAL_ERROR, then the stream error goes to onStreamError", async (t) => {
  // Given a server collecting stream errors
  const errors: string[] = [];
  const { address } = await started(t, { onStreamError: (e) => errors.push(e.message) });
  // When a client resets its call with an error code
  await resetCall(address, h2.NGHTTP2_INTERNAL_ERROR);
  // Then the stream's error is reported
  t.true(await until(() => errors.length > 0));
  t.deepEqual(errors, ["Stream closed with error code NGHTTP2_INTERNAL_ERROR"]);
});

test("grpc server errors › given no onStreamError, then session and stream errors are dropped and the server keeps serving", async (t) => {
  // Given a server with no error callback
  const { address, port } = await started(t);
  const uncaught: Error[] = [];
  const onUncaught = (e: Error) => uncaught.push(e);
  process.on("uncaughtException", onUncaught);
  t.teardown(() => void process.off("uncaughtException", onUncaught));
  // When a peer sends garbage and a client resets a call with an error code
  garbage(port);
  await resetCall(address, h2.NGHTTP2_INTERNAL_ERROR);
  // Then nothing escapes, and the next call is answered
  const session = h2connect(`http://${address}`);
  session.on("error", () => {});
  t.teardown(() => session.close());
  t.deepEqual((await exchange(session, [frameMessage(Buffer.from("b"))], { ":path": PATH })).messages.map(String), ["b"]);
  t.deepEqual(uncaught, []);
});

test("grpc server errors › given a Unix socket whose listener is alive but too busy to accept (a connect gets EAGAIN, not ECONNREFUSED), then bind refuses it and the listener keeps its path", async (t) => {
  // Given a live listener with a backlog of 1 and three connections made in this same turn, before its event loop can
  // accept any: its accept queue is full, so one more connect fails with EAGAIN
  const dir = mkdtempSync(join(tmpdir(), "meshext-grpc-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "busy.sock");
  const live = createNetServer();
  await new Promise<void>((resolve) => live.listen({ path, backlog: 1 }, resolve));
  const socketFile = statSync(path).ino;
  const queued = [1, 2, 3].map(() => connect(path).on("error", () => {}));
  t.teardown(() => {
    for (const socket of queued) socket.destroy();
    live.close();
  });
  const server = new GrpcServer(options);
  t.teardown(() => server.shutdown(100));
  // When the gRPC server binds the same path, its probe connecting while the queue is still full
  const bound = server.bind(`unix:${path}`);
  // Then it is refused as in use: a busy listener is not a dead one's leftover
  await t.throwsAsync(bound, { code: "EADDRINUSE" });
  // and the path is still the listener's socket file, not removed and bound anew
  t.is(statSync(path).ino, socketFile);
});

/** A call on `session` that sends `text` and ends; resolves with the RST_STREAM code its stream closed with (0: none). */
function closeCode(session: ReturnType<typeof h2connect>, text: string): Promise<number | undefined> {
  const req = session.request({ ":method": "POST", ":path": PATH, "content-type": "application/grpc", te: "trailers" });
  req.on("error", () => {});
  req.resume();
  req.end(frameMessage(Buffer.from(text)));
  return new Promise((resolve) => req.once("close", () => resolve(req.rstCode)));
}

for (const [mib, code] of [[1, h2.NGHTTP2_ENHANCE_YOUR_CALM], [8, h2.NGHTTP2_NO_ERROR]] as const) {
  test(`grpc server errors › given maxSessionMemoryMiB ${mib} and a 2 MiB reply the client does not read, then a new call on that connection is ${code === h2.NGHTTP2_NO_ERROR ? "served" : "refused (ENHANCE_YOUR_CALM)"}`, async (t) => {
    // Given a server whose handler answers "big" with a 2 MiB message, under a session memory cap of `mib` MiB
    let written!: () => void;
    const bigWritten = new Promise<void>((resolve) => (written = resolve));
    const bigOnAsk: Method<Buffer, Buffer> = {
      path: PATH, decode: (b) => Buffer.from(b), encode: (m) => m,
      open: (call) => ({
        onMessage: (m) => {
          if (String(m) !== "big") return call.write(m);
          call.write(Buffer.alloc(2 << 20));
          written();
        },
        onHalfClose: () => call.end(), onReadError() {}, onCancel() {},
      }),
    };
    const { session } = await bareServer(t, bigOnAsk, { ...options, maxSessionMemoryMiB: mib });
    // When a client asks for it and does not read it (past the flow-control window it stays queued on the server)
    const held = session.request({ ":method": "POST", ":path": PATH, "content-type": "application/grpc", te: "trailers" });
    held.on("error", () => {});
    held.pause();
    held.write(frameMessage(Buffer.from("big")));
    await bigWritten;
    // Then a second call on the same connection is refused over the cap, and served under it
    t.is(await closeCode(session, "small"), code);
    held.close();
  });
}

/**
 * The listening HTTP/2 servers of `server`. A listening server emits 'error' only when an accept fails, which cannot
 * be made here (libuv absorbs EMFILE with a spare descriptor; ENFILE or ENOMEM would starve the machine), so these
 * tests hand the server such an error the way Node's accept path emits it.
 */
const listening = (server: GrpcServer) => (server as unknown as { servers: import("node:http2").Http2Server[] }).servers;
const acceptFailed = () => Object.assign(new Error("accept EMFILE"), { code: "EMFILE", errno: -24, syscall: "accept" });

for (const reported of [true, false]) {
  test(`grpc server errors › given a listening server whose accept fails, then the error ${reported ? "goes to onStreamError" : "is dropped (no onStreamError)"} and the server keeps serving`, async (t) => {
    // Given a bound server, with or without an error callback
    const errors: Error[] = [];
    const { server, address } = await started(t, reported ? { onStreamError: (e) => errors.push(e) } : {});
    t.is(listening(server).length, 1);
    // When its listener reports a failed accept
    const error = acceptFailed();
    t.notThrows(() => listening(server)[0]!.emit("error", error));
    // Then it is reported (or dropped), nothing is thrown, and the next call is answered
    t.deepEqual(errors, reported ? [error] : []);
    const session = h2connect(`http://${address}`);
    session.on("error", () => {});
    t.teardown(() => session.close());
    t.deepEqual((await exchange(session, [frameMessage(Buffer.from("c"))], { ":path": PATH })).messages.map(String), ["c"]);
  });
}
