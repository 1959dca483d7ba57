// The emulator's implementations of the proxy-wasm 0.2.1 host functions, with Envoy's status codes.
// Linkable imports the emulator does not implement answer Unimplemented; WASI answers ENOSYS.
import { MetricType, Status } from "./proxy-wasm-abi.js";
import type { HeaderMap } from "./header-map.js";
import { decodePairs, encodePairs, HeaderPairs } from "./proxy-wasm-pairs.js";
import type { ProxyWasmHost } from "./proxy-wasm-host.js";

/** Thrown inside an import implementation to return a status instead of trapping. */
export class HostStatus extends Error {
  constructor(readonly status: number) { super(`proxy status ${status}`); }
}

type Impl = (host: ProxyWasmHost, ...args: any[]) => number;
const encoder = new TextEncoder();
const ENOSYS = 52;

function map(host: ProxyWasmHost, mapType: number): HeaderMap {
  const headers = host.headers(mapType);
  if (!headers) throw new HostStatus(Status.BadArgument); // not available in this callback
  return headers;
}

function pairsAt(host: ProxyWasmHost, ptr: number, len: number): HeaderPairs {
  try {
    return decodePairs(host.bytes(ptr, len));
  } catch (error) {
    if (error instanceof HostStatus) throw error;
    throw new HostStatus(Status.BadArgument);
  }
}

function metricOf(host: ProxyWasmHost, id: number) {
  const name = host.metricIds.get(id);
  const metric = name === undefined ? undefined : host.process.metrics.get(name);
  if (!metric) throw new HostStatus(Status.NotFound);
  return metric;
}

const IMPLEMENTATIONS: Record<string, Impl> = {
  proxy_log(host, level: number, ptr: number, len: number) {
    if (level > 5) return Status.BadArgument;
    host.log(level, host.text(ptr, len));
    return Status.Ok;
  },
  proxy_get_log_level(host, ret: number) {
    host.writeU32(ret, 0);
    return Status.Ok;
  },
  proxy_get_current_time_nanoseconds(host, ret: number) {
    host.writeU64(ret, BigInt(Math.trunc(host.process.clock.nowMs)) * 1_000_000n);
    return Status.Ok;
  },
  proxy_set_tick_period_milliseconds(host, periodMs: number) {
    const root = host.currentRoot();
    if (!root) return Status.BadArgument;
    root.tickPeriodMs = periodMs >>> 0;
    root.nextTickMs = host.process.clock.nowMs + root.tickPeriodMs;
    return Status.Ok;
  },
  proxy_get_status(host, retCode: number, retPtr: number, retLen: number) {
    const response = host.phase.callResponse;
    if (!response) return Status.NotFound;
    host.writeU32(retCode, response.status);
    return host.copyOut(encoder.encode(response.message), retPtr, retLen);
  },
  proxy_get_property(host, pathPtr: number, pathLen: number, retPtr: number, retLen: number) {
    const value = host.property(host.text(pathPtr, pathLen));
    if (value === undefined) return Status.NotFound;
    return host.copyOut(value, retPtr, retLen);
  },
  proxy_get_buffer_bytes(host, type: number, start: number, maxSize: number, retPtr: number, retLen: number) {
    const buffer = host.buffer(type);
    if (!buffer) return Status.NotFound;
    if (start > buffer.length) return Status.BadArgument;
    const length = Math.min(maxSize >>> 0, buffer.length - start);
    // Like proxy-wasm-cpp-host: zero bytes → Ok without touching the return slots.
    return length > 0 ? host.copyOut(buffer.subarray(start, start + length), retPtr, retLen) : Status.Ok;
  },
  proxy_get_buffer_status(host, type: number, retLen: number, retFlags: number) {
    const buffer = host.buffer(type);
    if (!buffer) return Status.NotFound;
    host.writeU32(retLen, buffer.length);
    host.writeU32(retFlags, 0);
    return Status.Ok;
  },
  proxy_get_header_map_value(host, type: number, keyPtr: number, keyLen: number, retPtr: number, retLen: number) {
    const value = map(host, type).get(host.headerKey(keyPtr, keyLen));
    if (value === undefined) return Status.NotFound;
    return host.copyOutText(value, retPtr, retLen);
  },
  proxy_add_header_map_value(host, type: number, keyPtr: number, keyLen: number, valuePtr: number, valueLen: number) {
    map(host, type).add(host.headerKey(keyPtr, keyLen), host.text(valuePtr, valueLen));
    return Status.Ok;
  },
  proxy_replace_header_map_value(host, type: number, keyPtr: number, keyLen: number, valuePtr: number, valueLen: number) {
    const headers = map(host, type);
    headers.replace(host.headerKey(keyPtr, keyLen), host.text(valuePtr, valueLen));
    return Status.Ok;
  },
  proxy_remove_header_map_value(host, type: number, keyPtr: number, keyLen: number) {
    map(host, type).remove(host.headerKey(keyPtr, keyLen));
    return Status.Ok;
  },
  proxy_get_header_map_pairs(host, type: number, retPtr: number, retLen: number) {
    return host.copyOut(encodePairs(map(host, type).pairs()), retPtr, retLen);
  },
  proxy_set_header_map_pairs(host, type: number, ptr: number, len: number) {
    const headers = map(host, type);
    headers.setAll(pairsAt(host, ptr, len));
    return Status.Ok;
  },
  proxy_get_header_map_size(host, type: number, ret: number) {
    host.writeU32(ret, map(host, type).size);
    return Status.Ok;
  },
  proxy_send_local_response(host, statusCode: number, detailsPtr: number, detailsLen: number, bodyPtr: number,
    bodyLen: number, pairsPtr: number, pairsLen: number, grpcStatus: number) {
    const stream = host.currentStream();
    if (!stream) return Status.BadArgument; // root contexts have no stream to answer
    stream.pendingLocal = {
      statusCode, details: host.text(detailsPtr, detailsLen), body: host.text(bodyPtr, bodyLen),
      headers: pairsAt(host, pairsPtr, pairsLen), grpcStatus,
    };
    return Status.Ok;
  },
  proxy_continue_stream(host) {
    return host.currentStream() ? Status.Ok : Status.BadArgument;
  },
  proxy_http_call(host, clusterPtr: number, clusterLen: number, headersPtr: number, headersLen: number, bodyPtr: number,
    bodyLen: number, _trailersPtr: number, _trailersLen: number, timeoutMs: number, retToken: number) {
    const root = host.currentRoot();
    const cluster = host.text(clusterPtr, clusterLen);
    const headers = pairsAt(host, headersPtr, headersLen);
    const has = (name: string) => headers.some(([k]) => k === name);
    if (!root || timeoutMs < 0 || !host.process.clusters.has(cluster)) return Status.BadArgument;
    if (!has(":path") || !has(":method") || !has(":authority")) return Status.BadArgument;
    const token = host.nextToken++;
    host.httpCalls.push({ token, rootId: root.id, cluster, headers, body: host.text(bodyPtr, bodyLen), timeoutMs });
    host.writeU32(retToken, token);
    return Status.Ok;
  },
  proxy_define_metric(host, type: number, namePtr: number, nameLen: number, retId: number) {
    const name = host.text(namePtr, nameLen);
    const metric = host.process.metrics.define(type, name);
    if (!metric) return Status.BadArgument;
    const id = ((host.metricIds.size + 1) << 2) | type; // Envoy: (index << 2) | type
    host.metricIds.set(id, name);
    host.writeU32(retId, id);
    return Status.Ok;
  },
  proxy_increment_metric(host, id: number, offset: bigint) {
    const metric = metricOf(host, id);
    if (metric.type === MetricType.Histogram) return Status.BadArgument;
    if (metric.type === MetricType.Counter && offset <= 0n) return Status.BadArgument;
    metric.value += offset;
    return Status.Ok;
  },
  proxy_record_metric(host, id: number, value: bigint) {
    const metric = metricOf(host, id);
    if (metric.type === MetricType.Counter) metric.value += value;
    else if (metric.type === MetricType.Gauge) metric.value = value;
    else metric.samples.push(value);
    return Status.Ok;
  },
  proxy_get_metric(host, id: number, ret: number) {
    const metric = metricOf(host, id);
    if (metric.type === MetricType.Histogram) return Status.BadArgument;
    host.writeU64(ret, BigInt.asUintN(64, metric.value));
    return Status.Ok;
  },
  proxy_get_shared_data(host, keyPtr: number, keyLen: number, retPtr: number, retLen: number, retCas: number) {
    const entry = host.process.sharedData.get(host.text(keyPtr, keyLen));
    if (!entry) return Status.NotFound;
    const status = host.copyOut(entry.value, retPtr, retLen);
    host.writeU32(retCas, entry.cas);
    return status;
  },
  proxy_set_shared_data(host, keyPtr: number, keyLen: number, valuePtr: number, valueLen: number, cas: number) {
    return host.process.sharedData.set(host.text(keyPtr, keyLen), host.bytes(valuePtr, valueLen), cas >>> 0);
  },
  proxy_set_effective_context(host, id: number) {
    if (!host.roots.has(id) && !host.streams.has(id)) return Status.BadArgument;
    host.effectiveContextId = id;
    return Status.Ok;
  },
  proxy_done() {
    return Status.Ok;
  },
};

type HostFunction = (...args: any[]) => number;

/**
 * `impl` as the function V8 links: it declares exactly `arity` parameters (a wasm→JS call whose arity matches takes
 * V8's fast path) and calls `impl` directly, with no rest array and no intermediate frame. It traps like V8 when
 * called during _initialize without being allowed there ("restricted_callback"), and turns HostStatus into the
 * returned status code.
 */
function hostFunction(arity: number, host: ProxyWasmHost, qualified: string, allowedDuringInit: boolean, impl: Impl): HostFunction {
  const guard = (): void => {
    if (host.phase.name === "initialize" && !allowedDuringInit) throw new Error(`restricted_callback: ${qualified} called during _initialize`);
  };
  const statusOf = (error: unknown): number => {
    if (error instanceof HostStatus) return error.status;
    throw error;
  };
  switch (arity) {
    case 0: return () => { guard(); try { return impl(host); } catch (error) { return statusOf(error); } };
    case 1: return (a) => { guard(); try { return impl(host, a); } catch (error) { return statusOf(error); } };
    case 2: return (a, b) => { guard(); try { return impl(host, a, b); } catch (error) { return statusOf(error); } };
    case 3: return (a, b, c) => { guard(); try { return impl(host, a, b, c); } catch (error) { return statusOf(error); } };
    case 4: return (a, b, c, d) => { guard(); try { return impl(host, a, b, c, d); } catch (error) { return statusOf(error); } };
    case 5: return (a, b, c, d, e) => { guard(); try { return impl(host, a, b, c, d, e); } catch (error) { return statusOf(error); } };
    case 6: return (a, b, c, d, e, f) => { guard(); try { return impl(host, a, b, c, d, e, f); } catch (error) { return statusOf(error); } };
    default: return (...args) => { guard(); try { return impl(host, ...args); } catch (error) { return statusOf(error); } };
  }
}

/** The import object for `module`: the emulator's implementation of each host function it imports. */
export function buildImports(module: WebAssembly.Module, host: ProxyWasmHost, initAllowed: ReadonlySet<string>): WebAssembly.Imports {
  const imports: Record<string, Record<string, WebAssembly.ImportValue>> = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.kind !== "function") continue;
    const qualified = `${imp.module}.${imp.name}`;
    const impl: Impl = imp.module === "env"
      ? IMPLEMENTATIONS[imp.name] ?? (() => Status.Unimplemented)
      : () => ENOSYS;
    const arity = Math.max(0, impl.length - 1);
    (imports[imp.module] ??= {})[imp.name] = hostFunction(arity, host, qualified, initAllowed.has(qualified), impl);
  }
  return imports;
}
