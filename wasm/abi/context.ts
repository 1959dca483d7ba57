// Context model behind abi/exports.ts: a plugin registers a root factory; the root makes one
// HttpContext per stream. Defaults pass everything through, so a plugin overrides only what it needs.
// One Context base class (one map, one dispatch) keeps the module small.
import { HeaderAction } from "./types";

export class Context {
  constructor(public readonly contextId: u32) {}
  // Root callbacks.
  onVmStart(vmConfigSize: u32): bool { return true; }
  onConfigure(pluginConfigSize: u32): bool { return true; }
  onTick(): void {}
  onHttpCallResponse(token: u32, headerCount: u32, bodySize: u32, trailerCount: u32): void {}
  newHttpContext(contextId: u32): Context { return new HttpContext(contextId); }
  // Stream callbacks.
  onRequestHeaders(headerCount: u32, endOfStream: bool): u32 { return HeaderAction.Continue; }
  onResponseHeaders(headerCount: u32, endOfStream: bool): u32 { return HeaderAction.Continue; }
  // Both.
  onDone(): bool { return true; }
  onLog(): void {}
  onDelete(): void {}
}

/** A root (plugin) context: configuration, ticks, outbound call responses. */
export class RootContext extends Context {}

/** A stream (HTTP request/response) context. */
export class HttpContext extends Context {}

let rootFactory: (contextId: u32) => Context = (contextId: u32): Context => new RootContext(contextId);

/** Called once from the plugin's entry (index.ts) while the module initialises. */
export function registerRootContext(factory: (contextId: u32) => Context): void {
  rootFactory = factory;
}

const contexts = new Map<u32, Context>();
const PASS_THROUGH = new Context(0);

/** The context with this id; an inert pass-through one for unknown ids (never aborts). */
export function contextOf(contextId: u32): Context {
  return contexts.has(contextId) ? contexts.get(contextId) : PASS_THROUGH;
}

export function createContext(contextId: u32, parentId: u32): void {
  if (parentId == 0) contexts.set(contextId, rootFactory(contextId));
  else if (contexts.has(parentId)) contexts.set(contextId, contexts.get(parentId).newHttpContext(contextId));
}

export function deleteContext(contextId: u32): void {
  contextOf(contextId).onDelete();
  contexts.delete(contextId);
}
