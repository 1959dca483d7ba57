// A proxy-wasm ABI 0.2.1 host emulator (modelled on proxy-wasm-go-sdk proxytest.HostEmulator) that runs
// a built .wasm with Node's WebAssembly the way Envoy would: it refuses modules Envoy would not link,
// forbids host calls other than logging during _initialize, keeps root and stream contexts apart,
// answers http_call on the root context, and shares data/metrics across VMs through an EnvoyProcess.
import { readFileSync } from "node:fs";
import {
  BufferType, EXPORT_SIGNATURES, HeaderAction, INIT_ALLOWED_IMPORTS, LogLevel, LogLevelName, MapType, Status, envoyLinks,
} from "./proxy-wasm-abi.js";
import { decodePairs, encodePairs, HeaderPairs } from "./proxy-wasm-pairs.js";
import { EnvoyProcess } from "./proxy-wasm-process.js";
import { buildImports, HostStatus } from "./proxy-wasm-imports.js";
import { AsciiInterner } from "./ascii-interner.js";
import { HeaderMap } from "./header-map.js";
import { utf8Bytes, utf8BytesRemembered, utf8Text } from "./utf8.js";
import { exportedFunctionSignatures } from "./wasm-binary.js";

export { EnvoyProcess } from "./proxy-wasm-process.js";
export type { HeaderPairs } from "./proxy-wasm-pairs.js";
export { HeaderMap } from "./header-map.js";

export class ModuleRejected extends Error {}

/** Why Envoy would refuse this module (missing import, missing export, bad signature); [] if it would load. */
export function moduleProblems(bytes: Uint8Array): string[] {
  const module = new WebAssembly.Module(bytes as BufferSource);
  const problems: string[] = [];
  for (const imp of WebAssembly.Module.imports(module)) {
    if (!envoyLinks(imp)) problems.push(`Failed to load Wasm module due to a missing import: ${imp.module}.${imp.name}`);
  }
  const exports = new Map(WebAssembly.Module.exports(module).map((e) => [e.name, e.kind]));
  if (exports.get("proxy_abi_version_0_2_1") !== "function") problems.push("missing export: proxy_abi_version_0_2_1");
  if (exports.get("proxy_on_memory_allocate") !== "function" && exports.get("malloc") !== "function") {
    problems.push("missing export: proxy_on_memory_allocate");
  }
  if (exports.get("memory") !== "memory") problems.push("missing export: memory");
  if (!exports.has("_initialize") && !exports.has("_start")) problems.push("missing export: _initialize or _start");
  for (const [name, actual] of exportedFunctionSignatures(bytes)) {
    const expected = EXPORT_SIGNATURES[name];
    if (expected && JSON.stringify(expected) !== JSON.stringify(actual)) problems.push(`Bad function signature for: ${name}`);
  }
  return problems;
}

export interface LocalResponse { statusCode: number; details: string; body: string; headers: HeaderPairs; grpcStatus: number }
export interface HttpCall {
  token: number; rootId: number; cluster: string; headers: HeaderPairs; body: string; timeoutMs: number;
}
export interface LogEntry { level: number; message: string }

export interface Stream {
  id: number;
  rootId: number;
  requestHeaders: HeaderMap | null;
  responseHeaders: HeaderMap | null;
  properties: Map<string, Uint8Array>;
  pendingLocal?: LocalResponse;
  localResponse?: LocalResponse;
}

export interface Root { id: number; tickPeriodMs: number; nextTickMs: number }

/** What the current callback may see (Envoy exposes buffers and call responses only inside their callback). */
export interface Phase {
  name: "initialize" | "vmStart" | "configure" | "tick" | "httpCallResponse" | "stream" | "idle";
  vmConfig?: Uint8Array;
  pluginConfig?: Uint8Array;
  callResponse?: { headers: HeaderMap; body: Uint8Array; trailers: HeaderMap; status: number; message: string };
}

type Exports = Record<string, (...args: number[]) => number>;
const encoder = new TextEncoder();

function toHeaderMap(headers: Record<string, string> | HeaderPairs): HeaderMap {
  return HeaderMap.lowercased(Array.isArray(headers) ? headers : Object.entries(headers));
}

/** Envoy's treatment of a header callback's return value (no allow_on_headers_stop_iteration). */
function envoyAction(raw: number, localReplySent: boolean): number {
  if (localReplySent || raw === HeaderAction.StopIteration || raw > HeaderAction.StopAllIterationAndWatermark) {
    return HeaderAction.StopAllIterationAndWatermark;
  }
  return raw;
}

/** The phase of every stream callback (shared: a callback never changes its phase object). */
const STREAM_PHASE: Phase = { name: "stream" };

export class ProxyWasmHost {
  readonly logEntries: LogEntry[] = [];
  readonly httpCalls: HttpCall[] = [];
  readonly roots = new Map<number, Root>();
  readonly streams = new Map<number, Stream>();
  readonly metricIds = new Map<number, string>();
  phase: Phase = { name: "idle" };
  effectiveContextId = 0;
  nextToken = 1;
  private nextContextId = 1;
  private memory!: WebAssembly.Memory;
  private exports!: Exports;

  private constructor(readonly process: EnvoyProcess) {}

  /** One worker VM running `wasm` (a path or bytes). VMs given the same `process` share data and metrics. */
  static load(wasm: string | Uint8Array, options: { process?: EnvoyProcess } = {}): ProxyWasmHost {
    const bytes = typeof wasm === "string" ? readFileSync(wasm) : wasm;
    const problems = moduleProblems(bytes);
    if (problems.length > 0) throw new ModuleRejected(problems.join("; "));
    const host = new ProxyWasmHost(options.process ?? new EnvoyProcess());
    const module = new WebAssembly.Module(bytes as BufferSource);
    const instance = new WebAssembly.Instance(module, buildImports(module, host, INIT_ALLOWED_IMPORTS));
    host.exports = instance.exports as unknown as Exports;
    host.memory = instance.exports.memory as WebAssembly.Memory;
    host.phase = { name: "initialize" };
    try {
      host.exports._initialize?.();
    } finally {
      host.phase = { name: "idle" };
    }
    return host;
  }

  // ---- memory, used by the import implementations ---------------------------------------------------------------------

  // Views over the module's memory, rebuilt only when memory.grow replaced its buffer: growing detaches the old
  // buffer, which leaves its views 0 bytes long, so no buffer getter per call (a 0-byte memory just rebuilds each time).
  private u8 = new Uint8Array(0);
  private dv = new DataView(new ArrayBuffer(0));
  private readonly interner = new AsciiInterner();

  private memoryBytes(): Uint8Array {
    if (this.u8.length === 0) {
      this.u8 = new Uint8Array(this.memory.buffer);
      this.dv = new DataView(this.memory.buffer);
    }
    return this.u8;
  }

  private memoryView(): DataView {
    this.memoryBytes();
    return this.dv;
  }

  private checkRange(ptr: number, len: number): Uint8Array {
    const view = this.memoryBytes();
    if (ptr < 0 || len < 0 || ptr + len > view.length) throw new HostStatus(Status.InvalidMemoryAccess);
    return view;
  }

  bytes(ptr: number, len: number): Uint8Array {
    return this.checkRange(ptr, len).slice(ptr, ptr + len);
  }

  text(ptr: number, len: number): string {
    const view = this.checkRange(ptr, len);
    return this.interner.text(this.dv, ptr, len, false) ?? utf8Text(view.subarray(ptr, ptr + len));
  }

  /** A header name as Envoy keys its maps: lowercased. */
  headerKey(ptr: number, len: number): string {
    const view = this.checkRange(ptr, len);
    return this.interner.text(this.dv, ptr, len, true) ?? utf8Text(view.subarray(ptr, ptr + len)).toLowerCase();
  }

  writeU32(ptr: number, value: number): void {
    const dv = this.memoryView();
    if (ptr + 4 > dv.byteLength) throw new HostStatus(Status.InvalidMemoryAccess);
    dv.setUint32(ptr, value >>> 0, true);
  }

  writeU64(ptr: number, value: bigint): void {
    const dv = this.memoryView();
    if (ptr + 8 > dv.byteLength) throw new HostStatus(Status.InvalidMemoryAccess);
    dv.setBigUint64(ptr, value, true);
  }

  /** Copy into memory the module allocates (proxy_on_memory_allocate), then write pointer and length. */
  copyOut(data: Uint8Array, retPtr: number, retLen: number): number {
    const ptr = this.exports.proxy_on_memory_allocate!(data.length) >>> 0;
    if (ptr === 0 && data.length > 0) return Status.InvalidMemoryAccess;
    this.memoryBytes().set(data, ptr);
    const dv = this.dv;
    if (retPtr + 4 > dv.byteLength || retLen + 4 > dv.byteLength) throw new HostStatus(Status.InvalidMemoryAccess);
    dv.setUint32(retPtr, ptr, true);
    dv.setUint32(retLen, data.length, true);
    return Status.Ok;
  }

  /** copyOut for text (its UTF-8 bytes). */
  copyOutText(text: string, retPtr: number, retLen: number): number {
    return this.copyOut(utf8BytesRemembered(text), retPtr, retLen);
  }

  log(level: number, message: string): void {
    this.logEntries.push({ level, message });
  }

  // ---- contexts and maps, as the current callback sees them ----------------------------------------------------------

  // The stream of the effective context, looked up once per context rather than once per host call.
  private lookedUpStreamId = -1;
  private lookedUpStream: Stream | undefined;

  currentStream(): Stream | undefined {
    const id = this.effectiveContextId;
    if (id !== this.lookedUpStreamId) {
      this.lookedUpStream = this.streams.get(id);
      this.lookedUpStreamId = id;
    }
    return this.lookedUpStream;
  }

  currentRoot(): Root | undefined {
    const stream = this.currentStream();
    return this.roots.get(stream ? stream.rootId : this.effectiveContextId);
  }

  /** The header map of this type as visible in the current callback, or undefined (→ BadArgument). */
  headers(mapType: number): HeaderMap | undefined {
    if (mapType === MapType.HttpCallResponseHeaders) return this.phase.callResponse?.headers;
    if (mapType === MapType.HttpCallResponseTrailers) return this.phase.callResponse?.trailers;
    const stream = this.currentStream();
    if (!stream) return undefined;
    if (mapType === MapType.RequestHeaders) return stream.requestHeaders ?? undefined;
    if (mapType === MapType.ResponseHeaders) return stream.responseHeaders ?? undefined;
    return undefined;
  }

  /** headers(mapType) as pairs (a copy), for inspection. */
  headerMap(mapType: number): HeaderPairs | undefined {
    return this.headers(mapType)?.pairs();
  }

  buffer(bufferType: number): Uint8Array | undefined {
    if (bufferType === BufferType.PluginConfiguration) return this.phase.pluginConfig;
    if (bufferType === BufferType.VmConfiguration) return this.phase.vmConfig;
    if (bufferType === BufferType.HttpCallResponseBody) return this.phase.callResponse?.body;
    return undefined;
  }

  property(path: string): Uint8Array | undefined {
    return this.currentStream()?.properties.get(path);
  }

  // ---- driving the module ---------------------------------------------------------------------

  private call(name: string, contextId: number, phase: Phase, ...args: number[]): number {
    const fn = this.exports[name];
    if (!fn) return 0;
    const previousPhase = this.phase;
    const previousEffective = this.effectiveContextId;
    this.phase = phase;
    this.effectiveContextId = contextId;
    try {
      return fn(...args) >>> 0;
    } finally {
      this.phase = previousPhase;
      this.effectiveContextId = previousEffective;
    }
  }

  /** Create a root context, start the VM and configure the plugin; the result of proxy_on_configure. */
  startPlugin(config: string | object = "", vmConfig = ""): boolean {
    const pluginConfig = encoder.encode(typeof config === "string" ? config : JSON.stringify(config));
    const vmConfigBytes = encoder.encode(vmConfig);
    const id = this.nextContextId++;
    this.roots.set(id, { id, tickPeriodMs: 0, nextTickMs: 0 });
    this.call("proxy_on_context_create", id, { name: "vmStart" }, id, 0);
    if (!this.call("proxy_on_vm_start", id, { name: "vmStart", vmConfig: vmConfigBytes }, id, vmConfigBytes.length)) return false;
    return this.call("proxy_on_configure", id, { name: "configure", pluginConfig }, id, pluginConfig.length) !== 0;
  }

  get rootId(): number {
    const first = this.roots.keys().next();
    if (first.done) throw new Error("emulator: startPlugin() first");
    return first.value;
  }

  newHttpContext(rootId = this.rootId): number {
    const id = this.nextContextId++;
    this.streams.set(id, { id, rootId, requestHeaders: null, responseHeaders: null, properties: new Map() });
    this.lookedUpStreamId = -1;
    this.call("proxy_on_context_create", id, STREAM_PHASE, id, rootId);
    return id;
  }

  private stream(id: number): Stream {
    const stream = this.streams.get(id);
    if (!stream) throw new Error(`emulator: no http context ${id}`);
    return stream;
  }

  /** Request headers arrive; `protocol` is what the `request.protocol` property reports. */
  callOnRequestHeaders(id: number, headers: Record<string, string> | HeaderPairs, options: { protocol?: string; endOfStream?: boolean } = {}): number {
    const stream = this.stream(id);
    stream.requestHeaders = toHeaderMap(headers);
    stream.properties.set("request\0protocol", utf8Bytes(options.protocol ?? "HTTP/1.1"));
    const path = stream.requestHeaders.get(":path");
    if (path !== undefined) stream.properties.set("request\0path", utf8Bytes(path));
    const raw = this.call("proxy_on_request_headers", id, STREAM_PHASE, id, stream.requestHeaders.size, options.endOfStream === false ? 0 : 1);
    const local = stream.pendingLocal;
    if (local) {
      // Envoy sends the local reply through the encoder filters, this one included.
      stream.pendingLocal = undefined;
      stream.localResponse = local;
      const replyHeaders: HeaderPairs = [[":status", String(local.statusCode)], ...local.headers];
      if (local.body.length > 0) replyHeaders.push(["content-length", String(encoder.encode(local.body).length)]);
      this.callOnResponseHeaders(id, replyHeaders, { endOfStream: local.body.length === 0 });
    }
    return envoyAction(raw, local !== undefined);
  }

  callOnResponseHeaders(id: number, headers: Record<string, string> | HeaderPairs, options: { endOfStream?: boolean } = {}): number {
    const stream = this.stream(id);
    stream.responseHeaders = toHeaderMap(headers);
    const raw = this.call("proxy_on_response_headers", id, STREAM_PHASE, id, stream.responseHeaders.size, options.endOfStream ? 1 : 0);
    return envoyAction(raw, false);
  }

  /** End of stream: proxy_on_done, proxy_on_log, proxy_on_delete (Envoy's order). */
  completeHttpContext(id: number): void {
    this.stream(id);
    this.call("proxy_on_done", id, STREAM_PHASE, id);
    this.call("proxy_on_log", id, STREAM_PHASE, id);
    this.call("proxy_on_delete", id, STREAM_PHASE, id);
    this.streams.delete(id);
    this.lookedUpStreamId = -1;
  }

  /** One tick for every root context that asked for ticks. */
  tick(): void {
    for (const root of this.roots.values()) {
      if (root.tickPeriodMs > 0) this.call("proxy_on_tick", root.id, { name: "tick" }, root.id);
    }
  }

  /** Move the shared clock forward, firing ticks when they fall due (for single-VM tests). */
  advance(ms: number): void {
    const target = this.process.clock.nowMs + ms;
    for (;;) {
      const due = [...this.roots.values()].filter((r) => r.tickPeriodMs > 0 && r.nextTickMs <= target)
        .sort((a, b) => a.nextTickMs - b.nextTickMs)[0];
      if (!due) break;
      this.process.clock.nowMs = Math.max(this.process.clock.nowMs, due.nextTickMs);
      due.nextTickMs += due.tickPeriodMs;
      this.call("proxy_on_tick", due.id, { name: "tick" }, due.id);
    }
    this.process.clock.nowMs = target;
  }

  pendingHttpCalls(): HttpCall[] {
    return [...this.httpCalls];
  }

  /** Answer an outstanding proxy_http_call; the response is delivered on the root context. */
  respondHttpCall(token: number, response: { status?: number; headers?: HeaderPairs; body?: string }): void {
    const call = this.takeCall(token);
    const headers: HeaderPairs = [[":status", String(response.status ?? 200)], ...(response.headers ?? [])];
    const body = encoder.encode(response.body ?? "");
    const callResponse = { headers: HeaderMap.of(headers), body, trailers: HeaderMap.empty(), status: Status.Ok, message: "" };
    this.call("proxy_on_http_call_response", call.rootId, { name: "httpCallResponse", callResponse }, call.rootId, token, headers.length, body.length, 0);
  }

  /** The call failed (reset, timeout, unreachable cluster): Envoy answers with no headers, no body. */
  failHttpCall(token: number): void {
    const call = this.takeCall(token);
    const callResponse = { headers: HeaderMap.empty(), body: new Uint8Array(0), trailers: HeaderMap.empty(), status: Status.BrokenConnection, message: "reset" };
    this.call("proxy_on_http_call_response", call.rootId, { name: "httpCallResponse", callResponse }, call.rootId, token, 0, 0, 0);
  }

  private takeCall(token: number): HttpCall {
    const index = this.httpCalls.findIndex((c) => c.token === token);
    if (index < 0) throw new Error(`emulator: no pending http call ${token}`);
    return this.httpCalls.splice(index, 1)[0]!;
  }

  // ---- inspection -----------------------------------------------------------------------------

  responseHeaders(id: number): HeaderPairs {
    return this.stream(id).responseHeaders?.pairs() ?? [];
  }

  responseHeader(id: number, name: string): string | undefined {
    return this.stream(id).responseHeaders?.get(name.toLowerCase());
  }

  localResponse(id: number): LocalResponse | undefined {
    return this.stream(id).localResponse;
  }

  /** A metric's value by name (shared across the process's VMs), or undefined if never defined. */
  metric(name: string): number | undefined {
    const metric = this.process.metrics.get(name);
    return metric ? Number(metric.value) : undefined;
  }

  logs(level: LogLevelName): string[] {
    return this.logEntries.filter((e) => e.level === LogLevel[level]).map((e) => e.message);
  }

  tickPeriodMs(rootId = this.rootId): number {
    return this.roots.get(rootId)?.tickPeriodMs ?? 0;
  }
}

export { encodePairs, decodePairs, HostStatus };
