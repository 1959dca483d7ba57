// proxy-wasm ABI 0.2.1 callbacks with the exact signatures Envoy checks, dispatching to abi/context.ts.
// Unknown context ids pass through (Continue / true): the filter never blocks traffic on its own bug.
import { contextOf, createContext, deleteContext } from "./context";
import { allocateForHost } from "./host";

// The minimal runtime collects only when asked, and only where no managed reference is on the
// wasm stack: at the end of a top-level callback. Ticks collect; so does every COLLECT_EVERY-th delete.
const COLLECT_EVERY: u32 = 256;
let deletesSinceCollect: u32 = 0;

export function proxy_abi_version_0_2_1(): void {}

/** The host copies returned data here (abi/host.ts: a static scratch area or the heap; it releases it). */
export function proxy_on_memory_allocate(size: usize): usize {
  return allocateForHost(size);
}

export function proxy_on_context_create(contextId: u32, parentId: u32): void {
  createContext(contextId, parentId);
}

export function proxy_on_vm_start(rootId: u32, vmConfigSize: u32): bool {
  return contextOf(rootId).onVmStart(vmConfigSize);
}

export function proxy_on_configure(rootId: u32, pluginConfigSize: u32): bool {
  return contextOf(rootId).onConfigure(pluginConfigSize);
}

export function proxy_on_tick(rootId: u32): void {
  contextOf(rootId).onTick();
  __collect();
}

export function proxy_on_http_call_response(rootId: u32, token: u32, headerCount: u32, bodySize: u32, trailerCount: u32): void {
  contextOf(rootId).onHttpCallResponse(token, headerCount, bodySize, trailerCount);
}

export function proxy_on_request_headers(contextId: u32, headerCount: u32, endOfStream: u32): u32 {
  return contextOf(contextId).onRequestHeaders(headerCount, endOfStream != 0);
}

export function proxy_on_response_headers(contextId: u32, headerCount: u32, endOfStream: u32): u32 {
  return contextOf(contextId).onResponseHeaders(headerCount, endOfStream != 0);
}

export function proxy_on_done(contextId: u32): bool {
  return contextOf(contextId).onDone();
}

export function proxy_on_log(contextId: u32): void {
  contextOf(contextId).onLog();
}

export function proxy_on_delete(contextId: u32): void {
  deleteContext(contextId);
  if (++deletesSinceCollect >= COLLECT_EVERY) {
    deletesSinceCollect = 0;
    __collect();
  }
}
