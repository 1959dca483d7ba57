// Context model behind abi/exports.ts: a plugin registers a root factory; the root makes one
// HttpContext per stream. Defaults pass everything through, so a plugin overrides only what it needs.
// One Context class (one map, one dispatch) keeps the module small; RootContext and HttpContext only
// name the role (as aliases: each subclass would add a case to every virtual dispatch).
import { HeaderAction } from "./types";

export class Context {
  constructor(public readonly contextId: u32) {}
  // Root callbacks.
  onVmStart(vmConfigSize: u32): bool { return true; }
  onConfigure(pluginConfigSize: u32): bool { return true; }
  onTick(): void {}
  onHttpCallResponse(token: u32, headerCount: u32, bodySize: u32, trailerCount: u32): void {}
  newHttpContext(contextId: u32): Context { return new Context(contextId); }
  // Stream callbacks.
  onRequestHeaders(headerCount: u32, endOfStream: bool): u32 { return HeaderAction.Continue; }
  onResponseHeaders(headerCount: u32, endOfStream: bool): u32 { return HeaderAction.Continue; }
  // Both.
  onDone(): bool { return true; }
  onLog(): void {}
  onDelete(): void {}
}

/** A root (plugin) context: configuration, ticks, outbound call responses. Plugins extend Context. */
export type RootContext = Context;

/** A stream (HTTP request/response) context. Plugins extend Context. */
export type HttpContext = Context;

let rootFactory: (contextId: u32) => Context = (contextId: u32): Context => new Context(contextId);

/** Called once from the plugin's entry (index.ts) while the module initialises. */
export function registerRootContext(factory: (contextId: u32) => Context): void {
  rootFactory = factory;
}

const PASS_THROUGH = new Context(0);

// Live contexts in an open-addressing table keyed by id (linear probing, backward-shift delete).
// Smaller than std Map, and Envoy's ids are sequential, so `id & mask` spreads them evenly.
let slots = new StaticArray<Context | null>(64);
let live: i32 = 0;

// @ts-ignore: decorator
@inline function slotOf(contextId: u32): i32 {
  const mask = slots.length - 1;
  let i = <i32>contextId & mask;
  for (;;) {
    const entry = unchecked(slots[i]);
    if (entry === null || entry.contextId == contextId) return i;
    i = (i + 1) & mask;
  }
  return 0; // unreachable: the table is never more than half full
}

function insert(context: Context): void {
  if ((live + 1) * 2 > slots.length) {
    const old = slots;
    slots = new StaticArray<Context | null>(old.length * 2);
    for (let i = 0; i < old.length; i++) {
      const entry = unchecked(old[i]);
      if (entry !== null) unchecked(slots[slotOf(entry.contextId)] = entry);
    }
  }
  const i = slotOf(context.contextId);
  if (unchecked(slots[i]) === null) live++;
  unchecked(slots[i] = context);
}

/** The context with this id; an inert pass-through one for unknown ids (never aborts). */
// @ts-ignore: decorator
@inline export function contextOf(contextId: u32): Context {
  const entry = unchecked(slots[slotOf(contextId)]);
  return entry !== null ? entry : PASS_THROUGH;
}

export function createContext(contextId: u32, parentId: u32): void {
  if (parentId == 0) insert(rootFactory(contextId));
  else {
    const parent = contextOf(parentId);
    if (parent !== PASS_THROUGH) insert(parent.newHttpContext(contextId));
  }
}

export function deleteContext(contextId: u32): void {
  let i = slotOf(contextId);
  const entry = unchecked(slots[i]);
  if (entry === null) return;
  entry.onDelete();
  live--;
  // Backward-shift deletion keeps every probe chain unbroken.
  const mask = slots.length - 1;
  let j = i;
  for (;;) {
    j = (j + 1) & mask;
    const next = unchecked(slots[j]);
    if (next === null) break;
    const home = <i32>next.contextId & mask;
    if (((j - home) & mask) >= ((j - i) & mask)) {
      unchecked(slots[i] = next);
      i = j;
    }
  }
  unchecked(slots[i] = null);
}
