// The built modules link in Envoy: imports ⊆ what Envoy links, exports with the ABI's signatures.
import test from "ava";
import { readFileSync } from "node:fs";
import { ENV_IMPORTS, EXPORT_SIGNATURES, envoyLinks } from "../helpers/proxy-wasm-abi.js";
import { ModuleRejected, moduleProblems, ProxyWasmHost } from "../helpers/proxy-wasm-host.js";
import { exportedFunctionSignatures } from "../helpers/wasm-binary.js";
import { FILTER_WASM, NOOP_WASM } from "./fixtures.js";

for (const [label, path] of [["filter", FILTER_WASM], ["noop", NOOP_WASM]] as const) {
  test(`module abi › ${label}: every import is one Envoy links (no env.abort/trace/seed/Date/console)`, (t) => {
    // given the built module
    const module = new WebAssembly.Module(readFileSync(path));
    // when its imports are listed
    const imports = WebAssembly.Module.imports(module);
    // then each is a proxy-wasm 0.2.1 env function (or WASI) Envoy registers
    const unlinkable = imports.filter((imp) => !envoyLinks(imp)).map((imp) => `${imp.module}.${imp.name}`);
    t.deepEqual(unlinkable, []);
    t.true(imports.every((imp) => imp.module === "env" && ENV_IMPORTS.has(imp.name)));
  });

  test(`module abi › ${label}: has the required exports and only ABI exports`, (t) => {
    const module = new WebAssembly.Module(readFileSync(path));
    const exports = new Map(WebAssembly.Module.exports(module).map((e) => [e.name, e.kind]));
    t.is(exports.get("proxy_abi_version_0_2_1"), "function");
    t.is(exports.get("proxy_on_memory_allocate"), "function");
    t.is(exports.get("memory"), "memory");
    t.is(exports.get("_initialize"), "function");
    const extra = [...exports.keys()].filter((name) => name !== "memory" && !(name in EXPORT_SIGNATURES));
    t.deepEqual(extra, [], "exports outside the ABI");
  });

  test(`module abi › ${label}: exported callbacks have the exact signatures Envoy checks`, (t) => {
    const signatures = exportedFunctionSignatures(readFileSync(path));
    for (const [name, actual] of signatures) t.deepEqual(actual, EXPORT_SIGNATURES[name], name);
    t.deepEqual(moduleProblems(readFileSync(path)), []);
  });
}

test("module abi › the filter exports the callbacks it needs", (t) => {
  const names = [...exportedFunctionSignatures(readFileSync(FILTER_WASM)).keys()];
  for (const name of ["proxy_on_context_create", "proxy_on_vm_start", "proxy_on_configure", "proxy_on_tick",
    "proxy_on_http_call_response", "proxy_on_request_headers", "proxy_on_response_headers", "proxy_on_done",
    "proxy_on_log", "proxy_on_delete"]) {
    t.true(names.includes(name), name);
  }
});

test("module abi › _initialize makes no host call but logging (the emulator enforces V8's rule)", (t) => {
  // given/when the module is instantiated and _initialize runs under the restriction
  const host = ProxyWasmHost.load(FILTER_WASM);
  // then it loaded (a restricted call would have trapped) and logged nothing alarming
  t.deepEqual(host.logs("critical"), []);
});

/** A hand-assembled module: (import "env" "<name>" (func)) plus the required exports. */
function moduleImporting(name: string): Uint8Array {
  const enc = (s: string) => [s.length, ...Buffer.from(s)];
  const section = (id: number, body: number[]) => [id, body.length, ...body];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [2, 0x60, 0, 0, 0x60, 1, 0x7f, 1, 0x7f]), // types: ()->(), (i32)->i32
    ...section(2, [1, ...enc("env"), ...enc(name), 0x00, 0]), // import func type 0
    ...section(3, [3, 0, 1, 0]), // three functions
    ...section(5, [1, 0x00, 1]), // memory 1 page
    ...section(7, [4, ...enc("proxy_abi_version_0_2_1"), 0, 1, ...enc("proxy_on_memory_allocate"), 0, 2,
      ...enc("memory"), 2, 0, ...enc("_initialize"), 0, 3]),
    ...section(10, [3, 2, 0, 0x0b, 4, 0, 0x41, 0, 0x0b, 2, 0, 0x0b]),
  ]);
}

test("module abi › the emulator refuses a module Envoy would not link (env.abort)", (t) => {
  // given a module importing env.abort, which AssemblyScript adds by default
  const bytes = moduleImporting("abort");
  // when it is loaded, then it is rejected with Envoy's message
  const error = t.throws(() => ProxyWasmHost.load(bytes), { instanceOf: ModuleRejected });
  t.regex(error!.message, /missing import: env\.abort/);
  // and the same module importing proxy_log instead loads
  t.notThrows(() => ProxyWasmHost.load(moduleImporting("proxy_log")));
});
