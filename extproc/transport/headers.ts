// Pure conversions between Envoy's HeaderMap (values in raw_value bytes) and plain string maps,
// and from HeaderEdits to Envoy's HeaderMutation (raw_value only, explicit append flag).
import type { HeaderMap, HeaderValue } from "../gen/envoy/config/core/v3/base.js";
import type { HeaderMutation } from "../gen/envoy/service/ext_proc/v3/external_processor.js";
import type { HeaderEdits } from "../decision.js";

/** Value of one header entry: raw_value when present (current Envoy), else the legacy `value`. */
export function headerValue(h: HeaderValue): string {
  return h.rawValue.length > 0 ? h.rawValue.toString("utf8") : h.value;
}

/** Lower-cased keys; repeated headers joined with "," (cookie with "; "), in arrival order. */
export function headerMapToMap(map: HeaderMap | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!map) return out;
  for (const h of map.headers) {
    const key = h.key.toLowerCase();
    const value = headerValue(h);
    const prev = out.get(key);
    out.set(key, prev === undefined ? value : prev + (key === "cookie" ? "; " : ",") + value);
  }
  return out;
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
