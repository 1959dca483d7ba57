// grpc server rotation › a peer that ignores the rotation GOAWAY and never closes its side: the server ends the
// rotated connection itself after ROTATION_GRACE_MS, and shutdown returns within its grace all the same; a call
// still running on a rotated connection gets shutdown's grace like any other.
import test from "ava";
import { GrpcServer, ROTATION_GRACE_MS, type Method, type ServerCall } from "../../extproc/transport/grpc-server.js";
import { frameMessage } from "../../extproc/transport/grpc-wire.js";
import { bareServer, exchange } from "./raw-grpc.js";
import { PROCESS_PATH } from "../../extproc/transport/stream.js";
import { rawPeer } from "./raw-peer.js";

const options = { maxReceiveMessageBytes: 1024, maxSessionMemoryMiB: 8, maxStreamsPerConnection: 0, onRotate() {} };

/** Polls `check` every 10 ms until it holds or `ms` pass. */
async function until(check: () => boolean, ms: number): Promise<boolean> {
  for (const started = Date.now(); !check() && Date.now() - started < ms; ) await new Promise((r) => setTimeout(r, 10));
  return check();
}

async function started(t: { teardown(fn: () => unknown): void }, maxStreamsPerConnection: number) {
  const server = new GrpcServer({ ...options, maxStreamsPerConnection });
  const address = await server.bind("127.0.0.1:0");
  t.teardown(() => server.shutdown(100));
  return { server, port: Number(address.slice(address.lastIndexOf(":") + 1)) };
}

test("grpc server rotation › given a peer that ignores the rotation GOAWAY, then after the grace the server ends the connection, and shutdown still returns", async (t) => {
  // Given a server that rotates after one stream, and a raw peer that makes one call and never closes
  const { server, port } = await started(t, 1);
  const peer = rawPeer(port, "/test.Rotation/Unknown");
  t.teardown(() => peer.socket.destroy());
  // When the notice GOAWAY has come
  t.true(await until(() => peer.goaways.length > 0, 3000));
  t.deepEqual(peer.goaways, [2 ** 31 - 1]);
  // Then, about the grace later, the server closes the connection itself: a GOAWAY naming the last stream, then the end
  t.true(await until(peer.ended, ROTATION_GRACE_MS + 3000), "the server never ended the rotated connection");
  t.is(peer.goaways.at(-1), 1);
  // and when the server then shuts down, it returns at once though the peer never closed its side
  const begun = Date.now();
  const done = await Promise.race([server.shutdown(10_000).then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 3000))]);
  t.true(done, "shutdown still waiting after 3 s");
  t.true(Date.now() - begun < 2000, `shutdown took ${Date.now() - begun} ms`);
});

test("grpc server rotation › given a call still running on a rotated connection, when the server shuts down with a grace, then the call finishes within it", async (t) => {
  // Given a server that rotates after one stream, and one call it holds open (its handler answers only when told)
  let held: ServerCall<Buffer> | undefined;
  const method: Method<Buffer, Buffer> = {
    path: PROCESS_PATH, decode: (b) => Buffer.from(b), encode: (m) => m,
    open: (call) => {
      held = call;
      return { onMessage() {}, onHalfClose() {}, onReadError() {}, onCancel() {}, onClosed() {} };
    },
  };
  const { server, session } = await bareServer(t, method, { maxStreamsPerConnection: 1 });
  const goaways: number[] = [];
  session.on("goaway", (_code, lastStreamId) => goaways.push(lastStreamId));
  const answer = exchange(session, [frameMessage(Buffer.from("slow"))]);
  // and the rotation grace is over: the server has closed the connection to new streams (its second GOAWAY)
  t.true(await until(() => goaways.length >= 2, ROTATION_GRACE_MS + 3000), `GOAWAYs seen: ${goaways.join()}`);
  t.truthy(held, "the call reached its handler");
  // When the server shuts down with 3 s of grace, and the call answers 200 ms later
  const begun = Date.now();
  const shutdown = server.shutdown(3000);
  setTimeout(() => {
    held!.write(Buffer.from("done"));
    held!.end();
  }, 200);
  // Then the client got the answer and an OK status, and shutdown returned once the call was over, not at the grace
  const got = await answer;
  t.deepEqual(got.messages.map(String), ["done"]);
  t.is(got.status, 0);
  await shutdown;
  t.true(Date.now() - begun < 2500, `shutdown took ${Date.now() - begun} ms`);
});
