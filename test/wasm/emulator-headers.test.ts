// The emulator's header maps through the ABI, as Envoy's: names lowercased, get answers the first value, add appends,
// replace sets the first and drops later duplicates (or appends), remove drops them all; BadArgument where no map
// is visible, InvalidMemoryAccess for bytes outside memory.
import test from "ava";
import { MapType, Status } from "../helpers/proxy-wasm-abi.js";
import { ProxyWasmHost } from "../helpers/proxy-wasm-host.js";
import { funcType, MAGIC_AND_VERSION, name, section, uleb, vec } from "../helpers/wasm-assemble.js";

type HostCall = (...args: number[]) => number;
interface HeaderCalls { get: HostCall; add: HostCall; replace: HostCall; remove: HostCall; size: HostCall }

/** Where the module's allocator hands the host room for returned values. */
const RETURNED_AT = 2048;

/** A module re-exporting the header-map host calls, so a test can make them with its own pointers. */
function headerCallsModule(): Uint8Array {
  const imports: Array<[string, number]> = [["proxy_get_header_map_value", 2], ["proxy_add_header_map_value", 2],
    ["proxy_replace_header_map_value", 2], ["proxy_remove_header_map_value", 3], ["proxy_get_header_map_size", 4]];
  return new Uint8Array([
    ...MAGIC_AND_VERSION,
    ...section(1, vec([funcType(0, 0), funcType(1, 1), funcType(5, 1), funcType(3, 1), funcType(2, 1)])),
    ...section(2, vec(imports.map(([fn, type]) => [...name("env"), ...name(fn), 0x00, type]))),
    ...section(3, vec([[0], [1], [0]])), // abi version, allocator, _initialize
    ...section(5, vec([[0x00, 1]])),
    ...section(7, vec([[...name("proxy_abi_version_0_2_1"), 0, 5], [...name("proxy_on_memory_allocate"), 0, 6],
      [...name("_initialize"), 0, 7], [...name("memory"), 2, 0], [...name("get"), 0, 0], [...name("add"), 0, 1],
      [...name("replace"), 0, 2], [...name("remove"), 0, 3], [...name("size"), 0, 4]])),
    ...section(10, vec([[2, 0, 0x0b], [5, 0, 0x41, ...uleb(RETURNED_AT), 0x0b], [2, 0, 0x0b]])),
  ]);
}

/** A stream whose response headers are `headers`, current as in a callback, and the module's calls on them. */
function streamWith(headers: Array<[string, string]>) {
  const host = ProxyWasmHost.load(headerCallsModule());
  host.startPlugin("");
  const id = host.newHttpContext();
  host.callOnResponseHeaders(id, headers);
  host.effectiveContextId = id;
  const { exports, memory } = host as unknown as { exports: HeaderCalls; memory: WebAssembly.Memory };
  let free = 16;
  /** [ptr, len] of `text` written into memory. */
  const put = (text: string): [number, number] => {
    const bytes = new TextEncoder().encode(text);
    new Uint8Array(memory.buffer).set(bytes, free);
    free += bytes.length;
    return [free - bytes.length, bytes.length];
  };
  const get = (key: string): string | number => {
    const status = exports.get(MapType.ResponseHeaders, ...put(key), 8, 12);
    if (status !== Status.Ok) return status;
    const view = new DataView(memory.buffer);
    return new TextDecoder().decode(new Uint8Array(memory.buffer, view.getUint32(8, true), view.getUint32(12, true)));
  };
  return {
    host, id, exports, put, get,
    add: (key: string, value: string) => exports.add(MapType.ResponseHeaders, ...put(key), ...put(value)),
    replace: (key: string, value: string) => exports.replace(MapType.ResponseHeaders, ...put(key), ...put(value)),
    remove: (key: string) => exports.remove(MapType.ResponseHeaders, ...put(key)),
    size: () => (exports.size(MapType.ResponseHeaders, 8) === Status.Ok ? new DataView(memory.buffer).getUint32(8, true) : -1),
  };
}

test("emulator › headers: replace sets the first value in place and drops later duplicates, names lowercased", (t) => {
  // given a response with a header twice, under two spellings
  const stream = streamWith([[":status", "200"], ["Set-Cookie", "a"], ["x", "1"], ["set-cookie", "b"]]);
  // when the module replaces it, naming it in yet another case
  t.is(stream.replace("SET-cookie", "c"), Status.Ok);
  // then one value is left, where the first was
  t.deepEqual(stream.host.responseHeaders(stream.id), [[":status", "200"], ["set-cookie", "c"], ["x", "1"]]);
  t.is(stream.get("Set-Cookie"), "c");
  t.is(stream.size(), 3);
});

test("emulator › headers: replace of an absent header appends it", (t) => {
  const stream = streamWith([[":status", "200"]]);
  t.is(stream.replace("Connection", "close"), Status.Ok);
  t.deepEqual(stream.host.responseHeaders(stream.id), [[":status", "200"], ["connection", "close"]]);
});

test("emulator › headers: add appends next to earlier values; get answers the first; remove drops them all", (t) => {
  // given a response with x: 1
  const stream = streamWith([[":status", "200"], ["x", "1"]]);
  // when the module adds x twice more (more than the map has spare room for, then some)
  for (const value of ["2", "3", "4", "5", "6"]) t.is(stream.add("X", value), Status.Ok);
  // then every value is kept, in order, and get answers the first
  t.deepEqual(stream.host.responseHeaders(stream.id).map(([, v]) => v), ["200", "1", "2", "3", "4", "5", "6"]);
  t.is(stream.get("x"), "1");
  // and when it removes x, none is left, and the next add starts over
  t.is(stream.remove("x"), Status.Ok);
  t.deepEqual(stream.host.responseHeaders(stream.id), [[":status", "200"]]);
  t.is(stream.get("x"), Status.NotFound);
  t.is(stream.add("x", "7"), Status.Ok);
  t.deepEqual(stream.host.responseHeaders(stream.id), [[":status", "200"], ["x", "7"]]);
});

test("emulator › headers: a later header of the same length but another name is left alone", (t) => {
  const stream = streamWith([["ab", "1"], ["cd", "2"], ["ab", "3"]]);
  t.is(stream.replace("cd", "4"), Status.Ok);
  t.deepEqual(stream.host.responseHeaders(stream.id), [["ab", "1"], ["cd", "4"], ["ab", "3"]]);
});

test("emulator › headers: no map from the root context (BadArgument); bytes outside memory (InvalidMemoryAccess)", (t) => {
  const stream = streamWith([[":status", "200"]]);
  t.is(stream.exports.replace(MapType.ResponseHeaders, 65536 - 2, 4, ...stream.put("v")), Status.InvalidMemoryAccess);
  t.is(stream.exports.add(MapType.ResponseHeaders, ...stream.put("k"), -1 >>> 0, 1), Status.InvalidMemoryAccess);
  stream.host.effectiveContextId = stream.host.rootId;
  t.is(stream.replace("x", "1"), Status.BadArgument);
  t.is(stream.get(":status"), Status.BadArgument);
  stream.host.effectiveContextId = stream.id;
  t.deepEqual(stream.host.responseHeaders(stream.id), [[":status", "200"]]);
});

test("emulator › headers: a name and value rewritten in place are read anew, never remembered stale", (t) => {
  // given a module that replaced a header from some addresses
  const stream = streamWith([[":status", "200"]]);
  const [keyPtr, keyLen] = stream.put("x-state");
  const [valuePtr, valueLen] = stream.put("one");
  t.is(stream.exports.replace(MapType.ResponseHeaders, keyPtr, keyLen, valuePtr, valueLen), Status.Ok);
  // when it writes another name and value of the same lengths at the same addresses and replaces again
  const memory = new Uint8Array((stream.host as unknown as { memory: WebAssembly.Memory }).memory.buffer);
  memory.set(new TextEncoder().encode("X-STATF"), keyPtr);
  memory.set(new TextEncoder().encode("two"), valuePtr);
  t.is(stream.exports.replace(MapType.ResponseHeaders, keyPtr, keyLen, valuePtr, valueLen), Status.Ok);
  // then the map holds both lines as their bytes read at each call
  t.deepEqual(stream.host.responseHeaders(stream.id), [[":status", "200"], ["x-state", "one"], ["x-statf", "two"]]);
});
