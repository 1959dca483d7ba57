// The host emulator itself follows the reference: pairs format, shared-data CAS, metric semantics,
// plugin configuration visible only during on_configure.
import test from "ava";
import { MetricType, Status } from "../helpers/proxy-wasm-abi.js";
import { decodePairs, encodePairs, ProxyWasmHost } from "../helpers/proxy-wasm-host.js";
import { MetricStore, SharedData } from "../helpers/proxy-wasm-process.js";
import { FILTER_WASM } from "./fixtures.js";

test("emulator › pairs: little-endian count, sizes, then NUL-terminated keys and values", (t) => {
  const bytes = encodePairs([[":path", "/"], ["a", ""]]);
  t.deepEqual([...bytes], [2, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
    0x3a, 0x70, 0x61, 0x74, 0x68, 0, 0x2f, 0, 0x61, 0, 0]);
  t.deepEqual(decodePairs(bytes), [[":path", "/"], ["a", ""]]);
  t.is(encodePairs([]).length, 0);
  t.throws(() => decodePairs(bytes.subarray(0, bytes.length - 1)));
});

test("emulator › shared data: NotFound, CAS mismatch, unconditional write with cas 0", (t) => {
  const data = new SharedData();
  t.is(data.get("k"), undefined);
  t.is(data.set("k", new Uint8Array([1]), 0), Status.Ok);
  const first = data.get("k")!;
  t.is(data.set("k", new Uint8Array([2]), first.cas), Status.Ok);
  t.is(data.set("k", new Uint8Array([3]), first.cas), Status.CasMismatch);
  t.deepEqual([...data.get("k")!.value], [2]);
  t.is(data.set("k", new Uint8Array([4]), 0), Status.Ok);
  t.deepEqual([...data.get("k")!.value], [4]);
});

test("emulator › metrics: one stat per name and type", (t) => {
  const metrics = new MetricStore();
  const counter = metrics.define(MetricType.Counter, "c");
  t.is(metrics.define(MetricType.Counter, "c"), counter);
  t.is(metrics.define(MetricType.Gauge, "c"), undefined);
  t.is(metrics.define(7, "x"), undefined);
});

test("emulator › plugin configuration is readable only inside on_configure", (t) => {
  // given a configured filter VM
  const host = ProxyWasmHost.load(FILTER_WASM);
  t.true(host.startPlugin({ draining: true }));
  // then outside on_configure the buffer is gone (NotFound from proxy_get_buffer_bytes)
  t.is(host.buffer(7), undefined);
  host.phase = { name: "configure", pluginConfig: new Uint8Array([1]) };
  t.deepEqual(host.buffer(7), new Uint8Array([1]));
  host.phase = { name: "idle" };
});

test("emulator › stream header maps are not visible from the root context", (t) => {
  const host = ProxyWasmHost.load(FILTER_WASM);
  host.startPlugin("");
  const id = host.newHttpContext();
  host.callOnRequestHeaders(id, { ":path": "/" });
  host.effectiveContextId = host.rootId;
  t.is(host.headerMap(0), undefined);
  host.effectiveContextId = id;
  t.deepEqual(host.headerMap(0), [[":path", "/"]]);
});
