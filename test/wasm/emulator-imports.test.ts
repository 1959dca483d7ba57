// How the emulator links host calls, whatever module calls them: only logging (and WASI) during _initialize, like
// V8's restricted_callback; Unimplemented for a function Envoy links but the emulator does not implement.
import test from "ava";
import { Status } from "../helpers/proxy-wasm-abi.js";
import { ProxyWasmHost } from "../helpers/proxy-wasm-host.js";
import { funcType, MAGIC_AND_VERSION, name, section, vec } from "../helpers/wasm-assemble.js";

/**
 * A module importing env.`importName` (i32 × params → i32), re-exporting it as "host_call", whose _initialize
 * calls it with zeros when `callDuringInitialize`.
 */
function moduleCalling(importName: string, params: number, callDuringInitialize: boolean): Uint8Array {
  const zeros = Array.from({ length: params }, () => [0x41, 0]).flat();
  const initialize = callDuringInitialize ? [0, ...zeros, 0x10, 0, 0x1a, 0x0b] : [0, 0x0b]; // call 0; drop
  return new Uint8Array([
    ...MAGIC_AND_VERSION,
    ...section(1, vec([funcType(0, 0), funcType(1, 1), funcType(params, 1)])),
    ...section(2, vec([[...name("env"), ...name(importName), 0x00, 2]])),
    ...section(3, vec([[0], [1], [0]])), // abi version, allocator, _initialize
    ...section(5, vec([[0x00, 1]])),
    ...section(7, vec([[...name("proxy_abi_version_0_2_1"), 0, 1], [...name("proxy_on_memory_allocate"), 0, 2],
      [...name("_initialize"), 0, 3], [...name("memory"), 2, 0], [...name("host_call"), 0, 0]])),
    ...section(10, vec([[2, 0, 0x0b], [4, 0, 0x41, 0, 0x0b], [initialize.length, ...initialize]])),
  ]);
}

test("emulator › imports: a host call other than logging during _initialize traps (restricted_callback)", (t) => {
  // given a module whose _initialize calls proxy_done
  const bytes = moduleCalling("proxy_done", 0, true);
  // when it is loaded, then _initialize traps as V8 makes it
  t.throws(() => ProxyWasmHost.load(bytes), { message: /restricted_callback: env\.proxy_done called during _initialize/ });
  // and the same call after _initialize answers Ok
  const host = ProxyWasmHost.load(moduleCalling("proxy_done", 0, false));
  t.is((host as unknown as { exports: { host_call(): number } }).exports.host_call(), Status.Ok);
});

test("emulator › imports: logging during _initialize is allowed", (t) => {
  // given a module whose _initialize logs an empty trace line (level 0, no bytes)
  const bytes = moduleCalling("proxy_log", 3, true);
  // when it is loaded, then it loads, and the line was logged
  t.deepEqual(ProxyWasmHost.load(bytes).logEntries, [{ level: 0, message: "" }]);
});

test("emulator › imports: a function Envoy links but the emulator does not implement answers Unimplemented", (t) => {
  const host = ProxyWasmHost.load(moduleCalling("proxy_close_stream", 1, false));
  t.is((host as unknown as { exports: { host_call(type: number): number } }).exports.host_call(0), Status.Unimplemented);
});
