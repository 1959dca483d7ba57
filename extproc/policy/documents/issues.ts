// Violation collection helpers for the validators: field paths, type guards, common checks.
import type { Violation } from "../model/types.js";

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function at(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

/** Collects violations; every validator appends here instead of stopping at the first problem. */
export class Issues {
  readonly list: Violation[] = [];
  /** Kuma's deprecation warnings: the document still loads. */
  readonly warnings: Violation[] = [];

  add(field: string, message: string): void {
    this.list.push({ field, message });
  }

  warn(field: string, message: string): void {
    this.warnings.push({ field, message });
  }

  /** Requires an object at `path`; returns it or undefined (after recording why). */
  obj(v: unknown, path: string, required = true): Obj | undefined {
    if (v === undefined) {
      if (required) this.add(path, "must be defined");
      return undefined;
    }
    if (!isObj(v)) {
      this.add(path, "must be an object");
      return undefined;
    }
    return v;
  }

  /** Requires an array at `path`; returns it or undefined. */
  arr(v: unknown, path: string, required = true, minItems = 0): unknown[] | undefined {
    if (v === undefined) {
      if (required) this.add(path, minItems > 0 ? "must have at least one element" : "must be defined");
      return undefined;
    }
    if (!Array.isArray(v)) {
      this.add(path, "must be a list");
      return undefined;
    }
    if (v.length < minItems) this.add(path, "must have at least one element");
    return v;
  }

  str(v: unknown, path: string, required = true): string | undefined {
    if (v === undefined) {
      if (required) this.add(path, "must be defined");
      return undefined;
    }
    if (typeof v !== "string") {
      this.add(path, "must be a string");
      return undefined;
    }
    if (required && v === "") this.add(path, "must not be empty");
    return v;
  }

  oneOf<T extends string>(v: unknown, path: string, allowed: readonly T[], required = true): T | undefined {
    if (v === undefined) {
      if (required) this.add(path, `must be defined (one of ${allowed.join(", ")})`);
      return undefined;
    }
    if (typeof v !== "string" || !(allowed as readonly string[]).includes(v)) {
      this.add(path, `must be one of ${allowed.join(", ")}`);
      return undefined;
    }
    return v as T;
  }

  int(v: unknown, path: string, min: number, max: number, required = true): number | undefined {
    if (v === undefined) {
      if (required) this.add(path, "must be defined");
      return undefined;
    }
    if (typeof v !== "number" || !Number.isInteger(v)) {
      this.add(path, "must be an integer");
      return undefined;
    }
    if (v < min || v > max) this.add(path, max === Number.MAX_SAFE_INTEGER ? `must be at least ${min}` : `must be in inclusive range [${min}, ${max}]`);
    return v;
  }

  bool(v: unknown, path: string): void {
    if (v !== undefined && typeof v !== "boolean") this.add(path, "must be a boolean");
  }

  /** A map of string → string (tags, labels). */
  stringMap(v: unknown, path: string, required: boolean, nonEmpty = false): Record<string, string> | undefined {
    const o = this.obj(v, path, required);
    if (!o) return undefined;
    if (nonEmpty && Object.keys(o).length === 0) this.add(path, "must have at least one element");
    for (const [k, val] of Object.entries(o)) {
      if (k === "") this.add(path, "tag key must not be empty");
      if (typeof val !== "string") this.add(at(path, k), "must be a string");
      else if (val === "") this.add(at(path, k), "tag value must not be empty");
    }
    return o as Record<string, string>;
  }
}

/** Removes `null` values deeply: in Kuma a null is an absent field, never an "unset". */
export function dropNulls(v: unknown): unknown {
  // Run on every document validated: plain loops (no entry pairs, no filtered copy), as filter/map and entries read.
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (let i = 0; i < v.length; i++) if (i in v && v[i] !== null) out.push(dropNulls(v[i]));
    return out;
  }
  if (isObj(v)) {
    const out: Obj = {};
    const keys = Object.keys(v);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const val = v[k];
      if (val !== null && val !== undefined) out[k] = dropNulls(val);
    }
    return out;
  }
  return v;
}
