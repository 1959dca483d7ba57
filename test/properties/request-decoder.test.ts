// Properties of the sidecar's ProcessingRequest decoder: for any message, and for any bytes, it gives exactly
// what the generated ts-proto decoder gives, or fails where that one fails.
import test from "ava";
import fc from "fast-check";
import { ProcessingRequest } from "../../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";
import { PHASES } from "../../extproc/transport/processor.js";
import { decodeProcessingRequest } from "../../extproc/transport/request-decoder.js";
import { budget } from "./budget.js";

/** The result, or the error's class and message. */
function outcome(decode: () => ProcessingRequest): { value: ProcessingRequest } | { error: string } {
  try {
    return { value: decode() };
  } catch (error) {
    return { error: `${(error as Error).constructor.name}: ${(error as Error).message}` };
  }
}

const text = fc.oneof(fc.string({ maxLength: 24 }), fc.constantFrom(":path", "x-forwarded-client-cert", "grüße", "日本", ""));
const header = fc.record({
  key: text,
  value: text,
  rawValue: fc.oneof(fc.constant(Buffer.alloc(0)), fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)), text.map((s) => Buffer.from(s))),
});
const struct = fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string({ maxLength: 8 }).map((s) => ({ kind: { $case: "stringValue", stringValue: s } })), fc.boolean().map((b) => ({ kind: { $case: "boolValue", boolValue: b } }))), { maxKeys: 3 })
  .map((fields) => ({ fields }));
const attributes = fc.dictionary(fc.constantFrom("envoy.filters.http.ext_proc", "x", ""), struct, { maxKeys: 2 });

const message = fc.record({
  phase: fc.constantFrom(...PHASES, undefined),
  headers: fc.array(header, { maxLength: 8 }),
  headerMapMissing: fc.boolean(),
  phaseAttributes: attributes,
  body: fc.uint8Array({ maxLength: 16 }),
  endOfStream: fc.boolean(),
  attributes,
  metadata: fc.option(fc.record({ filterMetadata: fc.dictionary(fc.string({ maxLength: 6 }), struct, { maxKeys: 2 }) }), { nil: undefined }),
  observabilityMode: fc.boolean(),
}).map((m) => {
  const headerMap = m.headerMapMissing ? undefined : { headers: m.headers };
  const content = m.phase === undefined ? undefined
    : m.phase.endsWith("Headers") ? { headers: headerMap, attributes: m.phaseAttributes, endOfStream: m.endOfStream }
    : m.phase.endsWith("Body") ? { body: m.body, endOfStream: m.endOfStream }
    : { trailers: headerMap };
  return ProcessingRequest.fromPartial({
    attributes: m.attributes, observabilityMode: m.observabilityMode, metadataContext: m.metadata as never,
    ...(m.phase ? { request: { $case: m.phase, [m.phase]: content } as never } : {}),
  });
});

test("properties › request decoder › any encoded ProcessingRequest decodes to what the generated decoder gives", (t) => {
  fc.assert(
    fc.property(message, (msg) => {
      const bytes = ProcessingRequest.encode(msg).finish();
      t.deepEqual(decodeProcessingRequest(bytes), ProcessingRequest.decode(bytes));
    }),
    budget(1500),
  );
  t.pass();
});

test("properties › request decoder › encoded messages cut, spliced or with bytes flipped decode (or fail) like the generated decoder", (t) => {
  const mangled = fc.tuple(message, fc.nat(), fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 6 })).map(([msg, a, b, noise]) => {
    const bytes = ProcessingRequest.encode(msg).finish();
    const at = bytes.length === 0 ? 0 : a % bytes.length;
    const variants = [
      bytes.subarray(0, at), // truncated
      Buffer.concat([bytes.subarray(0, at), noise, bytes.subarray(at)]), // junk spliced in
      Buffer.from(bytes).map((x, i) => (i === at ? x ^ (1 + (b % 255)) : x)), // one byte flipped
    ];
    return variants[b % variants.length]!;
  });
  fc.assert(
    fc.property(fc.oneof(mangled, fc.uint8Array({ maxLength: 96 })), (bytes) => {
      t.deepEqual(outcome(() => decodeProcessingRequest(bytes)), outcome(() => ProcessingRequest.decode(bytes)));
    }),
    budget(3000),
  );
  t.pass();
});

test("properties › request decoder › header values are views of the received bytes, not copies", (t) => {
  // given an encoded request_headers message
  const bytes = Buffer.from(ProcessingRequest.encode(ProcessingRequest.fromPartial({
    request: { $case: "requestHeaders", requestHeaders: { headers: { headers: [{ key: ":path", rawValue: Buffer.from("/a") }, { key: "x-empty" }] } } },
  })).finish());
  // when decoded
  const headers = (decodeProcessingRequest(bytes).request as { requestHeaders: { headers: { headers: Array<{ rawValue: Buffer }> } } }).requestHeaders.headers.headers;
  // then the value shares the message's memory, and an absent raw_value is empty
  t.is(headers[0]!.rawValue.buffer, bytes.buffer);
  t.is(headers[0]!.rawValue.toString(), "/a");
  t.is(headers[1]!.rawValue.length, 0);
});
