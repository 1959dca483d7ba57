// grpc call resets › the events a call's handler sees (grpc-call.ts) when the client's end of the stream and its reset arrive together: node reads both in one turn, so the reset closes the stream before the half-close, deferred to the next turn, is delivered.
import test from "ava";
import { constants as h2 } from "node:http2";
import { connect } from "node:net";
import { frameMessage } from "../../extproc/transport/grpc-wire.js";
import { GrpcServer, type Method } from "../../extproc/transport/grpc-server.js";
import { connectionStart, frame, grpcRequestHeaders } from "./raw-peer.js";

const PATH = "/test.Resets/Call";
const DATA = 0x0;
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;

/** A served method whose handler records its events and never ends the call itself; `over` settles on a cancel or a close. */
async function recordingServer(t: { teardown(fn: () => unknown): void }) {
  const events: string[] = [];
  let settle!: () => void;
  const over = new Promise<void>((resolve) => (settle = resolve));
  const method: Method<Buffer, Buffer> = {
    path: PATH, decode: (b) => Buffer.from(b), encode: (m) => m,
    open: () => ({
      onMessage: (m) => events.push(`message ${String(m)}`),
      onHalfClose: () => events.push("half-close"),
      onReadError: (e) => events.push(`read error ${e.code}`),
      onCancel: () => {
        events.push("cancel");
        settle();
      },
      onClosed: () => {
        events.push("closed");
        settle();
      },
    }),
  };
  const server = new GrpcServer({ maxReceiveMessageBytes: 1024, maxSessionMemoryMiB: 8, maxStreamsPerConnection: 0, onRotate() {} });
  server.add(method);
  const port = Number((await server.bind("127.0.0.1:0")).split(":").at(-1));
  t.teardown(() => server.shutdown(100));
  return { port, events, over };
}

/** Writes the connection start and `frames` of stream 1 to the server in ONE socket write (so node reads them together). */
function sendTogether(t: { teardown(fn: () => unknown): void }, port: number, frames: Buffer[]): void {
  const socket = connect({ port, host: "127.0.0.1" });
  socket.on("error", () => {});
  t.teardown(() => socket.destroy());
  socket.write(Buffer.concat([connectionStart(), ...frames]));
}

const rst = (code: number) => frame(RST_STREAM, 0, 1, Buffer.from([code >>> 24, (code >>> 16) & 0xff, (code >>> 8) & 0xff, code & 0xff]));
/** The check queue runs in order: past this, any half-close deferred before the stream closed has been delivered. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

test("grpc call resets › given a message with END_STREAM and a RST_STREAM(CANCEL) read together, then the handler sees the message and the cancel, never a half-close", async (t) => {
  // Given a handler that records its events
  const { port, events, over } = await recordingServer(t);
  // When one write carries the request headers, a message ending the client's side, and a reset with CANCEL
  sendTogether(t, port, [frame(HEADERS, END_HEADERS, 1, grpcRequestHeaders(PATH)), frame(DATA, END_STREAM, 1, frameMessage(Buffer.from("hi"))), rst(h2.NGHTTP2_CANCEL)]);
  await over;
  await nextTurn();
  // Then the call was cancelled: the half-close its END_STREAM had scheduled is not delivered after the cancel
  t.deepEqual(events, ["message hi", "cancel"]);
});

test("grpc call resets › given an empty END_STREAM and a RST_STREAM(CANCEL) read together, then the handler sees only the cancel", async (t) => {
  // Given a handler that records its events
  const { port, events, over } = await recordingServer(t);
  // When one write carries the request headers, an empty DATA frame ending the client's side, and a reset with CANCEL
  sendTogether(t, port, [frame(HEADERS, END_HEADERS, 1, grpcRequestHeaders(PATH)), frame(DATA, END_STREAM, 1, Buffer.alloc(0)), rst(h2.NGHTTP2_CANCEL)]);
  await over;
  await nextTurn();
  // Then only the cancel: no half-close (and no "request needs a message" for it) after it
  t.deepEqual(events, ["cancel"]);
});

test("grpc call resets › given a RST_STREAM(NO_ERROR) before the handler ended the call, then it is a cancel, not a clean close", async (t) => {
  // Given a handler that records its events and has not ended its call
  const { port, events, over } = await recordingServer(t);
  // When the client sends a message and resets the stream with NO_ERROR, its side still open
  sendTogether(t, port, [frame(HEADERS, END_HEADERS, 1, grpcRequestHeaders(PATH)), frame(DATA, 0, 1, frameMessage(Buffer.from("hi"))), rst(h2.NGHTTP2_NO_ERROR)]);
  await over;
  await nextTurn();
  // Then the call is cancelled: a NO_ERROR reset is a clean close only once the handler has ended the call
  t.deepEqual(events, ["message hi", "cancel"]);
});
