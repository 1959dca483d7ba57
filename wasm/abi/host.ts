// Typed wrappers over abi/imports.ts: they return a status or a nullable value and never abort.
// Byte arguments are an ArrayBuffer or an ASCII string constant (see ptrOf).
// Data the host returns lands in memory from proxy_on_memory_allocate; it is copied out and freed here.
import { OBJECT, TOTAL_OVERHEAD } from "rt/common";
import * as env from "./imports";
import { Status } from "./types";
import { Writer } from "./writer";

// Return slots for host calls; static memory, zeroed before each call because Envoy leaves them
// untouched when it returns Ok with zero bytes.
const RET_PTR: usize = memory.data(8);
const RET_LEN: usize = memory.data(8);
const RET_CAS: usize = memory.data(8);

// Data the host returns goes where proxy_on_memory_allocate says. Small results (a header value, a
// property) land in one static scratch area instead of the heap: no allocation, free or collector work on
// the per-request path. A result is read or copied before the next host call, which may reuse the area.
const SCRATCH_BYTES: usize = 256;
const SCRATCH: usize = memory.data(<i32>SCRATCH_BYTES, 16);
let scratchTaken = false;

/** proxy_on_memory_allocate: the scratch area when free and large enough, else the heap. */
// @ts-ignore: decorator
@inline export function allocateForHost(size: usize): usize {
  if (size <= SCRATCH_BYTES && !scratchTaken) {
    scratchTaken = true;
    return SCRATCH;
  }
  return heap.alloc(size);
}

// @ts-ignore: decorator
@inline function releaseReturned(ptr: usize): void {
  if (ptr == SCRATCH) scratchTaken = false;
  else if (ptr != 0) heap.free(ptr);
}

// @ts-ignore: decorator
@inline function clearReturnSlots(): void {
  store<u64>(RET_PTR, 0);
  store<u64>(RET_LEN, 0);
  store<u64>(RET_CAS, 0);
  scratchTaken = false; // whatever the previous call returned has been consumed
}

/** Bytes the host returned, copied into a managed buffer (the host's copy is released). */
function takeReturnedBytes(): ArrayBuffer {
  const ptr = <usize>load<u32>(RET_PTR);
  const len = load<u32>(RET_LEN);
  const out = new ArrayBuffer(<i32>len);
  if (ptr != 0 && len > 0) memory.copy(changetype<usize>(out), ptr, len);
  releaseReturned(ptr);
  return out;
}

/** Where the last borrow*() result lies; read it, then releaseBorrowed(), before the next host call. */
export let borrowedPtr: usize = 0;
export let borrowedLength: i32 = 0;

// @ts-ignore: decorator
@inline function borrowReturned(status: u32): bool {
  if (status != Status.Ok) return false;
  borrowedPtr = <usize>load<u32>(RET_PTR);
  borrowedLength = <i32>load<u32>(RET_LEN);
  return true;
}

// @ts-ignore: decorator
@inline export function releaseBorrowed(): void {
  releaseReturned(borrowedPtr);
  borrowedPtr = 0;
  borrowedLength = 0;
}

// Bytes passed to the host are an ArrayBuffer, or an ASCII string constant narrowed into one of a
// few static slots: no allocation per call and no managed global (nor GC visit) per constant.
// Constants longer than SLOT_BYTES would be cut; ours are all shorter.
const SLOT_BYTES: usize = 64;
const SLOTS: usize = memory.data(<i32>SLOT_BYTES * 2);

function narrow(text: string, slot: usize): usize {
  const out = SLOTS + slot * SLOT_BYTES;
  for (let i: usize = 0, n = min(<usize>text.length, SLOT_BYTES); i < n; i++) {
    store<u8>(out + i, load<u16>(changetype<usize>(text) + (i << 1)));
  }
  return out;
}

/** Pointer to the bytes of `value` (string constants: in static slot `slot`, 0 or 1). */
// @ts-ignore: decorator
@inline function ptrOf<T>(value: T, slot: usize = 0): usize {
  if (isString<T>()) return narrow(changetype<string>(value), slot);
  return changetype<usize>(value);
}

// @ts-ignore: decorator
@inline function lenOf<T>(value: T): usize {
  if (isString<T>()) return min(<usize>changetype<string>(value).length, SLOT_BYTES);
  return <usize>byteLengthOf(changetype<ArrayBuffer>(value));
}

/**
 * `buffer.byteLength`, always inlined: std's getter stays a call in the -Oz build, and the per-request path asks
 * it for every header name and value it hands the host. Same read as the getter (the object header's size).
 */
// @ts-ignore: decorator
@inline export function byteLengthOf(buffer: ArrayBuffer): i32 {
  return <i32>changetype<OBJECT>(changetype<usize>(buffer) - TOTAL_OVERHEAD).rtSize;
}

// ---- logging and time -------------------------------------------------------------------------

export function log(level: u32, line: Writer): void {
  env.proxy_log(level, line.base, <usize>line.length);
}

/** Wall-clock time in ms since the Unix epoch, or 0 if the host cannot tell. */
export function nowMs(): i64 {
  store<u64>(RET_CAS, 0);
  if (env.proxy_get_current_time_nanoseconds(RET_CAS) != Status.Ok) return 0;
  return <i64>(load<u64>(RET_CAS) / 1_000_000);
}

export function setTickPeriodMs(periodMs: u32): u32 {
  return env.proxy_set_tick_period_milliseconds(periodMs);
}

// ---- headers, properties, buffers -------------------------------------------------------------

/** First value of a header (UTF-8 bytes), or null when absent or unavailable in this callback. */
export function getHeader<K>(mapType: u32, key: K): ArrayBuffer | null {
  clearReturnSlots();
  if (env.proxy_get_header_map_value(mapType, ptrOf(key), lenOf(key), RET_PTR, RET_LEN) != Status.Ok) return null;
  return takeReturnedBytes();
}

export function addHeader<K, V>(mapType: u32, key: K, value: V): u32 {
  return env.proxy_add_header_map_value(mapType, ptrOf(key), lenOf(key), ptrOf(value, 1), lenOf(value));
}

// @ts-ignore: decorator
@inline export function replaceHeader<K, V>(mapType: u32, key: K, value: V): u32 {
  return env.proxy_replace_header_map_value(mapType, ptrOf(key), lenOf(key), ptrOf(value, 1), lenOf(value));
}

/** First value of a header left in place (borrowedPtr/borrowedLength); false when absent or unavailable. */
// @ts-ignore: decorator
@inline export function borrowHeader<K>(mapType: u32, key: K): bool {
  clearReturnSlots();
  return borrowReturned(env.proxy_get_header_map_value(mapType, ptrOf(key), lenOf(key), RET_PTR, RET_LEN));
}

/** A property's raw bytes left in place (borrowedPtr/borrowedLength); false when unknown. */
// @ts-ignore: decorator
@inline export function borrowProperty<P>(path: P): bool {
  clearReturnSlots();
  return borrowReturned(env.proxy_get_property(ptrOf(path), lenOf(path), RET_PTR, RET_LEN));
}

/** A property's raw bytes (path segments '\0'-joined in `path`), or null. */
export function getProperty<P>(path: P): ArrayBuffer | null {
  clearReturnSlots();
  if (env.proxy_get_property(ptrOf(path), lenOf(path), RET_PTR, RET_LEN) != Status.Ok) return null;
  return takeReturnedBytes();
}

/** Up to maxSize bytes of a host buffer from `start`, or null when the buffer is not available. */
export function getBufferBytes(bufferType: u32, start: u32, maxSize: u32): ArrayBuffer | null {
  clearReturnSlots();
  if (env.proxy_get_buffer_bytes(bufferType, start, maxSize, RET_PTR, RET_LEN) != Status.Ok) return null;
  return takeReturnedBytes();
}

export function sendLocalResponse<D, B>(statusCode: u32, details: D, body: B, headerPairs: ArrayBuffer): u32 {
  return env.proxy_send_local_response(
    statusCode, ptrOf(details), lenOf(details), ptrOf(body, 1), lenOf(body), ptrOf(headerPairs), lenOf(headerPairs), -1,
  );
}

// ---- outbound calls ---------------------------------------------------------------------------

/** Token of the last successful httpCall (valid only when it returned Ok). */
export let lastCallToken: u32 = 0;

export function httpCall(cluster: ArrayBuffer, headerPairs: ArrayBuffer, timeoutMs: u32): u32 {
  clearReturnSlots();
  const status = env.proxy_http_call(
    ptrOf(cluster), lenOf(cluster), ptrOf(headerPairs), lenOf(headerPairs), 0, 0, 0, 0, timeoutMs, RET_PTR,
  );
  lastCallToken = load<u32>(RET_PTR);
  return status;
}

// ---- metrics ----------------------------------------------------------------------------------

/** Metric id, or -1 when the host refused the definition. */
export function defineMetric(metricType: u32, name: Writer): i64 {
  store<u32>(RET_PTR, 0);
  if (env.proxy_define_metric(metricType, name.base, <usize>name.length, RET_PTR) != Status.Ok) return -1;
  return <i64>load<u32>(RET_PTR);
}

export function incrementMetric(id: u32, offset: i64): u32 {
  return env.proxy_increment_metric(id, offset);
}

export function recordMetric(id: u32, value: i64): u32 {
  return env.proxy_record_metric(id, value);
}

// ---- shared data ------------------------------------------------------------------------------

/** Status of the last getSharedData, and the CAS token of the entry it returned (0 if none). */
export let sharedStatus: u32 = 0;
export let sharedCas: u32 = 0;

/**
 * A shared-data entry's value (its token in sharedCas), or null: sharedStatus says NotFound for a
 * missing key, or another failure. Results in module variables, like lastCallToken: no result object.
 */
export function getSharedData<K>(key: K): ArrayBuffer | null {
  clearReturnSlots();
  sharedCas = 0;
  sharedStatus = env.proxy_get_shared_data(ptrOf(key), lenOf(key), RET_PTR, RET_LEN, RET_CAS);
  if (sharedStatus != Status.Ok) return null;
  sharedCas = load<u32>(RET_CAS);
  return takeReturnedBytes();
}

/** Write only if the entry still has `cas` (0 = unconditional); CasMismatch when another VM won. */
export function setSharedData<K>(key: K, value: ArrayBuffer, cas: u32): u32 {
  return env.proxy_set_shared_data(ptrOf(key), lenOf(key), ptrOf(value), lenOf(value), cas);
}
