// The test client's copy of Envoy's header-mutation rules: what Envoy drops, fails on, or applies.
import test from "ava";
import type { HeaderMutation } from "../../extproc/gen/envoy/service/ext_proc/v3/external_processor.js";
import { SHIPPED_MUTATION_RULES } from "../../extproc/envoy-mutation-rules.js";
import { applyHeaderMutation, type Headers, type MutationRules } from "../helpers/envoy-mutation-rules.js";

const set = (key: string, value: string, append = false, legacyValue = "") => ({
  header: { key, value: legacyValue, rawValue: Buffer.from(value) },
  append,
  appendAction: 0,
  keepEmptyValue: false,
});

const rule = test.macro((t, m: Partial<HeaderMutation>, rules: MutationRules, want: { headers: Headers; rejected: number; error?: RegExp }) => {
  const headers: Headers = [[":authority", "svc"], ["x-a", "1"]];
  const result = applyHeaderMutation({ setHeaders: [], removeHeaders: [], ...m }, headers, rules);
  t.deepEqual(headers, want.headers);
  t.is(result.rejected, want.rejected);
  if (want.error) t.regex(result.error ?? "", want.error);
  else t.is(result.error, undefined);
});

test("mutation rules › a plain set overwrites", rule, { setHeaders: [set("x-a", "2")] }, {}, { headers: [[":authority", "svc"], ["x-a", "2"]], rejected: 0 });
test("mutation rules › append adds another value", rule, { setHeaders: [set("x-a", "2", true)] }, {}, { headers: [[":authority", "svc"], ["x-a", "1"], ["x-a", "2"]], rejected: 0 });
test("mutation rules › x-envoy-* is dropped unless allowed", rule, { setHeaders: [set("x-envoy-ratelimited", "true")] }, {}, { headers: [[":authority", "svc"], ["x-a", "1"]], rejected: 1 });
test("mutation rules › x-envoy-* applies with allow_envoy", rule, { setHeaders: [set("x-envoy-ratelimited", "true")] }, { allowEnvoy: true }, { headers: [[":authority", "svc"], ["x-a", "1"], ["x-envoy-ratelimited", "true"]], rejected: 0 });
test("mutation rules › :authority is a routing header", rule, { setHeaders: [set(":authority", "other")] }, {}, { headers: [[":authority", "svc"], ["x-a", "1"]], rejected: 1 });
test("mutation rules › pseudo-headers are never removed", rule, { removeHeaders: [":authority"] }, { allowAllRouting: true }, { headers: [[":authority", "svc"], ["x-a", "1"]], rejected: 1 });
test("mutation rules › disallow_is_error turns a dropped edit into a failure", rule, { setHeaders: [set("host", "x")] }, { disallowIsError: true }, { headers: [[":authority", "svc"], ["x-a", "1"]], rejected: 1, error: /mutation_rejected\{host\}/ });
test("mutation rules › value and raw_value both set is an error", rule, { setHeaders: [set("x-b", "raw", false, "legacy")] }, {}, { headers: [[":authority", "svc"], ["x-a", "1"]], rejected: 0, error: /both_value_and_raw_value/ });
test("mutation rules › only the legacy value gives an empty header", rule, { setHeaders: [set("x-b", "", false, "legacy")] }, {}, { headers: [[":authority", "svc"], ["x-a", "1"], ["x-b", ""]], rejected: 0 });

// The shipped envoy.yaml rules (extproc/envoy-mutation-rules.ts; fidelity.test.ts keeps envoy.yaml equal).
const SHIPPED = { allowExpression: SHIPPED_MUTATION_RULES.allowExpression };
test("mutation rules › shipped rules: :authority may be rewritten (URLRewrite hostname)", rule, { setHeaders: [set(":authority", "other")] }, SHIPPED, { headers: [["x-a", "1"], [":authority", "other"]], rejected: 0 });
test("mutation rules › shipped rules: :scheme stays protected", rule, { setHeaders: [set(":scheme", "https")] }, SHIPPED, { headers: [[":authority", "svc"], ["x-a", "1"]], rejected: 1 });
test("mutation rules › shipped rules: x-envoy-* stays protected", rule, { setHeaders: [set("x-envoy-upstream-rq-timeout-ms", "1")] }, SHIPPED, { headers: [[":authority", "svc"], ["x-a", "1"]], rejected: 1 });
test("mutation rules › shipped rules: host is still never removable", rule, { removeHeaders: ["host"] }, SHIPPED, { headers: [[":authority", "svc"], ["x-a", "1"]], rejected: 1 });
// Envoy denies every name starting "x-envoy" (its header_prefix), no dash needed: test/envoy-real/dropped-edits.test.ts.
test("mutation rules › shipped rules: x-envoyfoo (no dash) is protected too", rule, { setHeaders: [set("x-envoyfoo", "1")] }, SHIPPED, { headers: [[":authority", "svc"], ["x-a", "1"]], rejected: 1 });
test("mutation rules › shipped rules: the bare x-envoy is protected", rule, { setHeaders: [set("x-envoy", "1")] }, SHIPPED, { headers: [[":authority", "svc"], ["x-a", "1"]], rejected: 1 });
test("mutation rules › shipped rules: x-envo is not the prefix and applies", rule, { setHeaders: [set("x-envo", "1")] }, SHIPPED, { headers: [[":authority", "svc"], ["x-a", "1"], ["x-envo", "1"]], rejected: 0 });
