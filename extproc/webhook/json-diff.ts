// The JSON Patch (RFC 6902) that turns one JSON value into another and keeps the target's key order:
// applying it gives the same bytes as serialising the target. An object whose surviving keys change
// order, or a list whose length changes, is replaced whole; everything else is patched key by key.
// Pure.
import type { Operation } from "fast-json-patch";

function pointer(path: readonly (string | number)[]): string {
  return path.map((k) => "/" + String(k).replaceAll("~", "~0").replaceAll("/", "~1")).join("");
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function sameScalar(a: unknown, b: unknown): boolean {
  return a === b || (Number.isNaN(a) && Number.isNaN(b));
}

/** Whether applying key-wise edits to `from` yields `to`'s key order: kept keys in the same order, new keys after them. */
function orderPreserved(from: Record<string, unknown>, to: Record<string, unknown>): boolean {
  const toKeys = Object.keys(to);
  const kept = Object.keys(from).filter((k) => k in to);
  const expected = [...kept, ...toKeys.filter((k) => !(k in from))];
  return expected.every((k, i) => k === toKeys[i]);
}

function diff(from: unknown, to: unknown, path: (string | number)[], ops: Operation[]): void {
  if (isPlainObject(from) && isPlainObject(to)) {
    if (!orderPreserved(from, to)) return void ops.push({ op: "replace", path: pointer(path), value: structuredClone(to) });
    for (const k of Object.keys(from)) if (!(k in to)) ops.push({ op: "remove", path: pointer([...path, k]) });
    for (const k of Object.keys(to)) {
      if (k in from) diff(from[k], to[k], [...path, k], ops);
      else ops.push({ op: "add", path: pointer([...path, k]), value: structuredClone(to[k]) });
    }
    return;
  }
  if (Array.isArray(from) && Array.isArray(to)) {
    if (from.length !== to.length) return void ops.push({ op: "replace", path: pointer(path), value: structuredClone(to) });
    to.forEach((v, i) => diff(from[i], v, [...path, i], ops));
    return;
  }
  if (!sameScalar(from, to)) ops.push({ op: "replace", path: pointer(path), value: structuredClone(to) });
}

export function jsonDiff(from: unknown, to: unknown): Operation[] {
  const ops: Operation[] = [];
  diff(from, to, [], ops);
  return ops;
}
