// Pure conversions between Envoy's HeaderMap (values in raw_value bytes) and plain string maps,
// and from HeaderEdits to Envoy's HeaderMutation (raw_value only, explicit append flag).
import type { HeaderMap, HeaderValue } from "../gen/envoy/config/core/v3/base.js";
import type { HeaderMutation } from "../gen/envoy/service/ext_proc/v3/external_processor.js";
import type { HeaderEdits } from "../decision.js";

/** Short ASCII values are decoded in JS: cheaper than Buffer#toString's call into C++ for the few bytes most headers hold. */
const SHORT_VALUE_BYTES = 64;

/** Value of one header entry: raw_value (UTF-8) when present (current Envoy), else the legacy `value`. */
export function headerValue(h: HeaderValue): string {
  const raw = h.rawValue;
  const n = raw.length;
  if (n === 0) return h.value;
  if (n > SHORT_VALUE_BYTES) return raw.toString("utf8");
  for (let i = 0; i < n; i++) if (raw[i]! > 0x7f) return raw.toString("utf8");
  return String.fromCharCode.apply(null, raw as unknown as number[]);
}

/** How repeated headers combine: cookie with "; " (RFC 6265), every other header with ",". */
function joined(key: string, previous: string, value: string): string {
  return previous + (key === "cookie" ? "; " : ",") + value;
}

/**
 * Envoy's request headers as a read-only map, lower-cased keys, repeated headers joined in arrival order.
 * Values are decoded only when asked for: a decision reads a handful of the headers a request carries.
 */
export class HeaderMapView implements ReadonlyMap<string, string> {
  private all: Map<string, string> | undefined;

  constructor(private readonly received: readonly HeaderValue[]) {}

  get(key: string): string | undefined {
    if (this.all) return this.all.get(key);
    let out: string | undefined;
    let keyIsLowerCase: boolean | undefined; // a key with capitals names no header, as in a lower-cased map
    for (const h of this.received) {
      const k = h.key;
      if (k.length !== key.length) continue;
      if (k === key ? !(keyIsLowerCase ??= key === key.toLowerCase()) : k.toLowerCase() !== key) continue;
      const value = headerValue(h);
      out = out === undefined ? value : joined(key, out, value);
    }
    return out;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** The whole map, built on the first call that needs every header (size, iteration). */
  private materialized(): Map<string, string> {
    if (!this.all) {
      const all = new Map<string, string>();
      for (const h of this.received) {
        const key = h.key.toLowerCase();
        const value = headerValue(h);
        const previous = all.get(key);
        all.set(key, previous === undefined ? value : joined(key, previous, value));
      }
      this.all = all;
    }
    return this.all;
  }

  get size(): number {
    return this.materialized().size;
  }

  forEach(fn: (value: string, key: string, map: ReadonlyMap<string, string>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.materialized()) fn.call(thisArg, value, key, this);
  }

  entries(): MapIterator<[string, string]> {
    return this.materialized().entries();
  }

  keys(): MapIterator<string> {
    return this.materialized().keys();
  }

  values(): MapIterator<string> {
    return this.materialized().values();
  }

  [Symbol.iterator](): MapIterator<[string, string]> {
    return this.materialized()[Symbol.iterator]();
  }
}

/** Lower-cased keys; repeated headers joined with "," (cookie with "; "), in arrival order. */
export function headerMapToMap(map: HeaderMap | undefined): ReadonlyMap<string, string> {
  return new HeaderMapView(map?.headers ?? []);
}

function entry(key: string, value: string, append: boolean) {
  return { header: { key: key.toLowerCase(), value: "", rawValue: Buffer.from(value, "utf8") }, append, appendAction: 0, keepEmptyValue: false };
}

/** HeaderEdits → HeaderMutation: values in raw_value only; `append` explicit (false = overwrite). */
export function toHeaderMutation(edits: HeaderEdits): HeaderMutation {
  return {
    setHeaders: [...edits.set.map(([k, v]) => entry(k, v, false)), ...edits.add.map(([k, v]) => entry(k, v, true))],
    removeHeaders: edits.remove.map((k) => k.toLowerCase()),
  };
}

export function isEmptyEdits(edits: HeaderEdits | undefined): boolean {
  return !edits || (edits.set.length === 0 && edits.add.length === 0 && edits.remove.length === 0);
}
