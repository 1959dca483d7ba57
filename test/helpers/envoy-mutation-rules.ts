// How Envoy's ext_proc applies a HeaderMutation (mutation_utils.cc / mutation_rules.cc, reference
// ext-proc.md §1.10): raw_value only, routing / system / x-envoy-* rules, APPEND vs SET. For the test client.
import type { HeaderMutation } from "../../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";

export type Headers = Array<[string, string]>;

export interface MutationRules {
  allowAllRouting?: boolean;
  allowEnvoy?: boolean;
  /** A denied mutation fails the request instead of being dropped. */
  disallowIsError?: boolean;
}

const ROUTING_HEADERS = new Set(["host", ":authority", ":method", ":scheme"]);

function denied(key: string, op: "set" | "append" | "remove", rules: MutationRules): boolean {
  if (op === "remove" && (key.startsWith(":") || key === "host")) return true;
  if (ROUTING_HEADERS.has(key) && !rules.allowAllRouting) return true;
  if (key.startsWith(":") && op === "append") return true;
  if (key.startsWith("x-envoy-") && !rules.allowEnvoy) return true;
  return false;
}

function removeAll(headers: Headers, key: string): void {
  for (let i = headers.length - 1; i >= 0; i--) if (headers[i]![0] === key) headers.splice(i, 1);
}

/** Applies `m` to `headers` in place; returns how many edits the rules dropped, or the error Envoy would fail with. */
export function applyHeaderMutation(m: HeaderMutation, headers: Headers, rules: MutationRules): { rejected: number; error?: string } {
  let rejected = 0;
  const reject = (key: string): string | undefined => {
    rejected++;
    return rules.disallowIsError ? `ext_proc_error_mutation_rejected{${key}}` : undefined;
  };
  for (const key of m.removeHeaders) {
    if (!denied(key, "remove", rules)) removeAll(headers, key);
    else {
      const error = reject(key);
      if (error) return { rejected, error };
    }
  }
  for (const opt of m.setHeaders) {
    const h = opt.header;
    if (!h) continue;
    if (h.value !== "" && h.rawValue.length > 0) return { rejected, error: "ext_proc_error_both_value_and_raw_value_set" };
    const value = h.rawValue.toString("utf8"); // Envoy reads raw_value only: `value` alone gives an empty header
    if (/[\0\r\n]/.test(value)) return { rejected, error: "ext_proc_error_invalid_header_value" };
    const key = h.key.toLowerCase();
    const append = opt.append === true && headers.some(([k]) => k === key);
    if (denied(key, append ? "append" : "set", rules)) {
      const error = reject(key);
      if (error) return { rejected, error };
      continue;
    }
    if (!append) removeAll(headers, key);
    headers.push([key, value]);
  }
  return { rejected };
}
