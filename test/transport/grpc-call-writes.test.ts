// grpc call writes › what a raw HTTP/2 client sees of a call's writes and statuses (grpc-call.ts): several
// replies on one call, a status after the end, writes after the end, several messages in one DATA frame, and
// messages that arrive after the handler ended the call.
import test from "ava";
import type { ClientHttp2Stream } from "node:http2";
import { frameMessage, GrpcStatus } from "../../extproc/transport/grpc-wire.js";
import type { Method, ServerCall } from "../../extproc/transport/grpc-call.js";
import { bareServer, exchange } from "./raw-grpc.js";

const PATH = "/test.Writes/Call";
const frame = (text: string) => frameMessage(Buffer.from(text));

/** `promise`, or a rejection naming `what` once `ms` pass (a call that never closes fails its test fast). */
function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** A method that logs the messages it is given and lets `onMessage` act on its call; half-close ends it OK. */
function method(onMessage: (call: ServerCall<Buffer>, message: string) => void) {
  const seen: string[] = [];
  const m: Method<Buffer, Buffer> = {
    path: PATH, decode: (b) => Buffer.from(b), encode: (b) => b,
    open: (call) => ({
      onMessage: (message) => {
        seen.push(String(message));
        onMessage(call, String(message));
      },
      onHalfClose: () => call.end(),
      onReadError: (e) => call.fail(e.code, e.details),
      onCancel() {},
    }),
  };
  return { method: m, seen };
}

/** A bare server for `m` whose stream and handler errors are collected. */
async function serve(t: Parameters<typeof bareServer>[0], m: Method<Buffer, Buffer>) {
  const errors: string[] = [];
  const { session } = await bareServer(t, m, { onStreamError: (e) => errors.push(`stream: ${e.message}`), onHandlerError: (e) => errors.push(`handler: ${e.message}`) });
  return { session, errors };
}

test("grpc call writes › given a handler that writes two replies for one message, then the client gets both and OK", async (t) => {
  // Given a handler answering each message twice
  const { method: m } = method((call, message) => {
    call.write(Buffer.from(`${message}-1`));
    call.write(Buffer.from(`${message}-2`));
  });
  const { session, errors } = await serve(t, m);
  // When one message is sent
  const result = await exchange(session, [frame("a")], { ":path": PATH });
  // Then both replies arrive, then OK, and nothing failed
  t.deepEqual(result.messages.map(String), ["a-1", "a-2"]);
  t.is(result.status, GrpcStatus.OK);
  t.deepEqual(errors, []);
});

test("grpc call writes › given a handler that ends the call and then fails it, then the first status (OK) stands", async (t) => {
  // Given a handler that replies, ends OK, then tries to fail the same call
  const { method: m } = method((call, message) => {
    call.write(Buffer.from(message));
    call.end();
    call.fail(GrpcStatus.INTERNAL, "too late");
  });
  const { session } = await serve(t, m);
  // When a message is sent
  const result = await exchange(session, [frame("b")], { ":path": PATH });
  // Then the client sees the reply and OK, not the later status
  t.deepEqual(result.messages.map(String), ["b"]);
  t.is(result.trailers["grpc-status"], "0");
  t.is(result.details, undefined);
});

test("grpc call writes › given a handler that writes after ending the call, with or without a reply before, then the write is dropped quietly", async (t) => {
  // Given a handler that ends the call (after a reply for "reply", Trailers-Only for "bare") and then writes
  const { method: m } = method((call, message) => {
    if (message === "reply") call.write(Buffer.from("first"));
    call.end();
    call.write(Buffer.from("after the end"));
  });
  const { session, errors } = await serve(t, m);
  // When each kind of call runs
  const bare = await within(2000, "the Trailers-Only call", exchange(session, [frame("bare")], { ":path": PATH }));
  const reply = await within(2000, "the call with a reply", exchange(session, [frame("reply")], { ":path": PATH }));
  // Then only what came before the end reached the client, each call ended OK, and no stream error was raised
  t.deepEqual(bare.messages, []);
  t.is(bare.status, GrpcStatus.OK);
  t.deepEqual(reply.messages.map(String), ["first"]);
  t.is(reply.status, GrpcStatus.OK);
  t.deepEqual(errors, []);
});

test("grpc call writes › given three messages in one DATA frame, then the handler gets each, in order", async (t) => {
  // Given an echo handler
  const { method: m, seen } = method((call, message) => call.write(Buffer.from(message)));
  const { session } = await serve(t, m);
  // When three framed messages go in one write
  const result = await exchange(session, [Buffer.concat([frame("1"), frame("2"), frame("3")])], { ":path": PATH });
  // Then all three are handled and echoed
  t.deepEqual(seen, ["1", "2", "3"]);
  t.deepEqual(result.messages.map(String), ["1", "2", "3"]);
  t.is(result.status, GrpcStatus.OK);
});

test("grpc call writes › given a call the handler ended on its first message, then a message the client sends later never reaches it", async (t) => {
  // Given a handler that fails the call on its first message
  const { method: m, seen } = method((call) => call.fail(GrpcStatus.NOT_FOUND, "no"));
  const { session } = await serve(t, m);
  // When the client sends one message, waits for the answer, then sends another and ends its side
  const req: ClientHttp2Stream = session.request({ ":method": "POST", ":path": PATH, "content-type": "application/grpc", te: "trailers" });
  req.on("error", () => {});
  const closed = new Promise((resolve) => req.once("close", resolve));
  req.write(frame("first"));
  const headers = await new Promise<Record<string, unknown>>((resolve) => req.once("response", resolve));
  req.end(frame("second"));
  await closed;
  // and a next call on the same connection is answered (so the server has read every frame before it)
  const next = await exchange(session, [frame("next")], { ":path": PATH });
  // Then the client got the handler's status, and the handler never saw the late message
  t.is(headers["grpc-status"], String(GrpcStatus.NOT_FOUND));
  t.is(next.status, GrpcStatus.NOT_FOUND);
  t.deepEqual(seen, ["first", "next"]);
});
