// How Envoy's ext_proc applies a HeaderMutation (Envoy's ext_proc mutation_utils.cc): raw_value only, the rule
// check (extproc/envoy-mutation-rules.ts, Envoy's mutation_rules.cc), APPEND vs SET. For the test client.
import { dropReason, type MutationOp, type MutationRules as EnvoyMutationRules } from "../../extproc/envoy-mutation-rules.js";
import type { HeaderMutation } from "../../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";

export type Headers = Array<[string, string]>;

export interface MutationRules extends Pick<EnvoyMutationRules, "allowAllRouting" | "allowEnvoy" | "allowExpression"> {
  /** A denied mutation fails the request instead of being dropped. */
  disallowIsError?: boolean;
}

const denied = (key: string, op: MutationOp, rules: MutationRules): boolean => dropReason(key, op, rules) !== undefined;

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
