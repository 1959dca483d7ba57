// One header map as the emulator keeps it (Envoy's HeaderMap semantics for the proxy-wasm calls): names, already
// lowercased, and values in two parallel arrays with room for a few more, so the module's add/replace calls
// allocate nothing per edit. HeaderPairs are made only when a test or an encoder asks for them.
import type { HeaderPairs } from "./proxy-wasm-pairs.js";

/**
 * Free slots each map starts with: a filter adds a few headers per response, and growing both arrays on the first
 * append would allocate (and later collect) two new backing stores per response.
 */
const SPARE_SLOTS = 4;

export class HeaderMap {
  /** names[i] and values[i] for i < count are the entries, in order; slots from count on are free. */
  private constructor(private readonly names: string[], private readonly values: string[], private count: number) {}

  static empty(): HeaderMap {
    return HeaderMap.build([], false);
  }

  /** `pairs` exactly as given (names the caller already lowercased, or deliberately did not). */
  static of(pairs: readonly (readonly [string, string])[]): HeaderMap {
    return HeaderMap.build(pairs, false);
  }

  /** `pairs` with each name lowercased (Envoy's LowerCaseString); order and duplicates kept. */
  static lowercased(pairs: readonly (readonly [string, string])[]): HeaderMap {
    return HeaderMap.build(pairs, true);
  }

  // Sized up front: this runs for every request and response the emulator is handed.
  private static build(pairs: readonly (readonly [string, string])[], lowercase: boolean): HeaderMap {
    const count = pairs.length;
    const names = new Array<string>(count + SPARE_SLOTS);
    const values = new Array<string>(count + SPARE_SLOTS);
    for (let i = 0; i < count; i++) {
      const pair = pairs[i]!;
      names[i] = lowercase ? pair[0].toLowerCase() : pair[0];
      values[i] = pair[1];
    }
    return new HeaderMap(names, values, count);
  }

  get size(): number {
    return this.count;
  }

  /** The first value of `name` (lowercase), or undefined. */
  get(name: string): string | undefined {
    const index = this.indexOf(name, 0);
    return index < 0 ? undefined : this.values[index];
  }

  /** Appends, keeping any earlier values of `name` (proxy_add_header_map_value). */
  add(name: string, value: string): void {
    const count = this.count;
    this.names[count] = name; // within the spare slots, or one past the end (the array grows)
    this.values[count] = value;
    this.count = count + 1;
  }

  /** Sets the first `name` in place and drops the later ones; appends when absent (proxy_replace_header_map_value). */
  replace(name: string, value: string): void {
    const first = this.indexOf(name, 0);
    if (first < 0) {
      this.add(name, value);
      return;
    }
    this.values[first] = value;
    for (let i = this.indexOf(name, first + 1); i >= 0; i = this.indexOf(name, i)) this.removeAt(i);
  }

  /** Drops every value of `name` (proxy_remove_header_map_value). */
  remove(name: string): void {
    for (let i = this.indexOf(name, 0); i >= 0; i = this.indexOf(name, i)) this.removeAt(i);
  }

  /** Replaces the whole map with `pairs`, names lowercased (proxy_set_header_map_pairs). */
  setAll(pairs: HeaderPairs): void {
    this.count = 0;
    for (const [name, value] of pairs) this.add(name.toLowerCase(), value);
  }

  /** A copy as [name, value] pairs, in order. */
  pairs(): HeaderPairs {
    const out: HeaderPairs = new Array(this.count);
    for (let i = 0; i < this.count; i++) out[i] = [this.names[i]!, this.values[i]!];
    return out;
  }

  /** The index of the first entry named `name` from `start` on, or -1. */
  private indexOf(name: string, start: number): number {
    const names = this.names;
    const length = name.length;
    // Lengths first: they settle almost every mismatch without a call to compare the strings.
    for (let i = start; i < this.count; i++) {
      const candidate = names[i]!;
      if (candidate.length === length && candidate === name) return i;
    }
    return -1;
  }

  private removeAt(index: number): void {
    const last = this.count - 1;
    for (let i = index; i < last; i++) {
      this.names[i] = this.names[i + 1]!;
      this.values[i] = this.values[i + 1]!;
    }
    this.names[last] = "";
    this.values[last] = "";
    this.count = last;
  }
}
