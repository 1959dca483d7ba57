// grpc wire › length-prefixed messages cut from arbitrary chunks, refused frames, grpc-message escaping.
import test from "ava";
import { decodeGrpcMessage, encodeGrpcMessage, frameMessage, GrpcError, GrpcStatus, MessageReader } from "../../extproc/transport/grpc-wire.js";

const bytes = (...values: number[]) => Buffer.from(values);

test("grpc wire › given a message, when framed, then it is a zero flag, a big-endian length and the bytes", (t) => {
  t.deepEqual([...frameMessage(bytes(7, 8, 9))], [0, 0, 0, 0, 3, 7, 8, 9]);
  t.deepEqual([...frameMessage(bytes())], [0, 0, 0, 0, 0]);
});

test("grpc wire › given two messages and a half in one chunk, when read, then the two come out and the half waits", (t) => {
  const reader = new MessageReader(1024);
  const stream = Buffer.concat([frameMessage(bytes(1)), frameMessage(bytes(2, 2)), frameMessage(bytes(3, 3, 3))]);
  const first = reader.push(stream.subarray(0, stream.length - 2));
  t.deepEqual(first.map((m) => [...m]), [[1], [2, 2]]);
  t.is(reader.bufferedBytes, 6);
  t.deepEqual(reader.push(stream.subarray(stream.length - 2)).map((m) => [...m]), [[3, 3, 3]]);
  t.is(reader.bufferedBytes, 0);
});

test("grpc wire › given a message fed one byte at a time, when read, then it comes out whole once its last byte arrives", (t) => {
  const reader = new MessageReader(1024);
  const frame = frameMessage(Buffer.from("hello"));
  const out: string[] = [];
  for (let i = 0; i < frame.length; i++) for (const m of reader.push(frame.subarray(i, i + 1))) out.push(m.toString());
  t.deepEqual(out, ["hello"]);
});

test("grpc wire › given a chunk whose buffer is reused after push, then the kept partial message is unaffected", (t) => {
  const reader = new MessageReader(1024);
  const chunk = Buffer.from(frameMessage(Buffer.from("abcd")).subarray(0, 7));
  reader.push(chunk);
  chunk.fill(0xff);
  t.deepEqual(reader.push(Buffer.from("cd")).map((m) => m.toString()), ["abcd"]);
});

test("grpc wire › given a compressed flag, then INTERNAL (no encoding was negotiated)", (t) => {
  const frame = frameMessage(bytes(1));
  frame[0] = 1;
  const error = t.throws(() => new MessageReader(1024).push(frame), { instanceOf: GrpcError });
  t.is(error.code, GrpcStatus.INTERNAL);
});

test("grpc wire › given a length above the limit, then RESOURCE_EXHAUSTED before the body arrives", (t) => {
  const prefix = frameMessage(Buffer.alloc(2000)).subarray(0, 5);
  const error = t.throws(() => new MessageReader(1024).push(prefix), { instanceOf: GrpcError });
  t.is(error.code, GrpcStatus.RESOURCE_EXHAUSTED);
  t.regex(error.details, /2000 vs\. 1024/);
});

test("grpc wire › given a message of exactly the receive limit, then it is read; one byte more is refused", (t) => {
  // gRPC's max receive message length is inclusive: a message of that many bytes is accepted
  const atLimit = Buffer.alloc(1024, 7);
  const reader = new MessageReader(1024);
  const [message] = reader.push(frameMessage(atLimit));
  t.is(message?.length, 1024);
  t.is(reader.bufferedBytes, 0);
  // and split across chunks just the same
  const split = new MessageReader(1024);
  const frame = frameMessage(atLimit);
  t.deepEqual(split.push(frame.subarray(0, 5)), []);
  t.is(split.push(frame.subarray(5))[0]?.length, 1024);
  const error = t.throws(() => new MessageReader(1024).push(frameMessage(Buffer.alloc(1025))), { instanceOf: GrpcError });
  t.is(error.code, GrpcStatus.RESOURCE_EXHAUSTED);
  t.regex(error.details, /1025 vs\. 1024/);
});

test("grpc wire › given details with '%', newlines and non-ASCII, then grpc-message escapes them and decodes back", (t) => {
  const details = "100% bad\nvalue: grüße";
  const encoded = encodeGrpcMessage(details);
  t.is(encoded, "100%25 bad%0Avalue: gr%C3%BC%C3%9Fe");
  t.is(decodeGrpcMessage(encoded), details);
});
