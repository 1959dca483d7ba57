// The emulator reads module memory through remembered texts and cached views: results stay exactly what a fresh
// UTF-8 decode of the bytes gives, whatever the module rewrote in place and after memory.grow.
import test from "ava";
import fc from "fast-check";
import { AsciiInterner, INTERNED_MAX_BYTES } from "../helpers/ascii-interner.js";
import { ProxyWasmHost } from "../helpers/proxy-wasm-host.js";
import { utf8BytesRemembered } from "../helpers/utf8.js";
import { CONTRACT, exchange, FILTER_WASM } from "./fixtures.js";

function memoryWith(text: string, at: number): DataView {
  const bytes = new Uint8Array(256);
  bytes.set(new TextEncoder().encode(text), at);
  return new DataView(bytes.buffer);
}

test("emulator › text: the same bytes at the same address give the same string", (t) => {
  // given a header name in memory
  const interner = new AsciiInterner();
  const memory = memoryWith("x-meshext-close", 16);
  // when it is read twice
  const first = interner.text(memory, 16, 15, false);
  const second = interner.text(memory, 16, 15, false);
  // then both reads give the text
  t.is(first, "x-meshext-close");
  t.is(second, "x-meshext-close");
});

test("emulator › text: bytes rewritten in place are read anew, never remembered stale", (t) => {
  // given a text read once
  const interner = new AsciiInterner();
  const memory = memoryWith("connection", 32);
  t.is(interner.text(memory, 32, 10, false), "connection");
  // when the module writes other bytes at the same address (same length, one byte differs)
  memory.setUint8(32 + 9, "s".charCodeAt(0));
  // then the next read sees them
  t.is(interner.text(memory, 32, 10, false), "connectios");
});

test("emulator › text: header names are lowercased in ASCII A-Z only, like Envoy's LowerCaseString", (t) => {
  const interner = new AsciiInterner();
  const memory = memoryWith("X-Meshext-Draining[@]", 0);
  t.is(interner.text(memory, 0, 21, true), "x-meshext-draining[@]");
  // and the same bytes read as a value keep their case
  t.is(interner.text(memory, 0, 21, false), "X-Meshext-Draining[@]");
});

test("emulator › text: non-ASCII or long texts are left to the UTF-8 decoder", (t) => {
  const interner = new AsciiInterner();
  t.is(interner.text(memoryWith("caf\u00e9", 0), 0, 5, false), undefined);
  t.is(interner.text(memoryWith("a".repeat(INTERNED_MAX_BYTES + 1), 0), 0, INTERNED_MAX_BYTES + 1, false), undefined);
});

test("emulator › text: any bytes at any addresses read as TextDecoder reads them", (t) => {
  // given one interner reused across many reads, mostly ASCII and often at the same few addresses (so texts
  // replace each other in place and slots collide)
  const ascii80OrAny = fc.oneof(fc.uint8Array({ maxLength: 80, max: 0x7f }), fc.uint8Array({ maxLength: 80 }));
  const interner = new AsciiInterner();
  const decoder = new TextDecoder();
  const memory = new DataView(new ArrayBuffer(4096));
  const view = new Uint8Array(memory.buffer);
  fc.assert(
    fc.property(ascii80OrAny, fc.oneof(fc.constantFrom(0, 8, 16), fc.nat({ max: 4000 })), fc.boolean(), (bytes, at, lowercase) => {
      view.set(bytes, at);
      const text = interner.text(memory, at, bytes.length, lowercase);
      const expected = decoder.decode(bytes);
      return text === undefined || text === (lowercase ? expected.replace(/[A-Z]/g, (c) => c.toLowerCase()) : expected);
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

test("emulator › header values handed to the module are their UTF-8 bytes, however often asked", (t) => {
  const encoder = new TextEncoder();
  fc.assert(
    fc.property(fc.oneof(fc.string({ maxLength: 20 }), fc.string({ unit: "grapheme", maxLength: 300 })), (text) => {
      const expected = [...encoder.encode(text)];
      return [1, 2].every(() => JSON.stringify([...utf8BytesRemembered(text)]) === JSON.stringify(expected));
    }),
    { numRuns: 500 },
  );
  t.pass();
});

test("emulator › memory.grow: host calls after the module's memory grew see the new memory", (t) => {
  // given a draining filter that served one request
  const host = ProxyWasmHost.load(FILTER_WASM);
  t.true(host.startPlugin({ draining: true }));
  t.is(host.responseHeader(exchange(host), CONTRACT.closeHeader), CONTRACT.closeHeaderValue);
  // when its memory grows (the old buffer is detached)
  (host as unknown as { memory: WebAssembly.Memory }).memory.grow(1);
  // then the next request's header reads and writes still work
  const id = exchange(host, { path: "/after/grow" });
  t.is(host.responseHeader(id, CONTRACT.closeHeader), CONTRACT.closeHeaderValue);
  t.is(host.responseHeader(id, CONTRACT.drainingHeader), CONTRACT.drainingHeaderValue);
  t.is(host.responseHeader(id, "connection"), "close");
});
