// PURE: which header edits Envoy's ext_proc filter applies and which it drops, under the HeaderMutationRules
// our shipped envoy/envoy.yaml sets (a test keeps the two equal). Envoy's checker: mutation_rules.cc in
// source/extensions/filters/common/mutation_rules/, applied by ext_proc's mutation_utils.cc.
import type { Decision, HeaderEdits } from "./decision.js";

/** The fields of envoy.config.common.mutation_rules.v3.HeaderMutationRules, regexes as source text. */
export interface MutationRules {
  allowAllRouting?: boolean;
  allowEnvoy?: boolean;
  disallowSystem?: boolean;
  disallowAll?: boolean;
  /** RE2 pattern matched against the whole header name. */
  allowExpression?: string;
  disallowExpression?: string;
  /** A denied edit fails the request (500) instead of being dropped. */
  disallowIsError?: boolean;
}

/**
 * What envoy/envoy.yaml sets on every ext_proc filter. MeshHTTPRoute needs, per header class:
 * - `host` / `:authority`: yes — URLRewrite `hostname` rewrites them; allowed by name (allow_expression).
 * - `:method`, `:scheme`: no filter changes them; left protected (not allow_all_routing).
 * - `:path`: URLRewrite `path`; Envoy allows it by default.
 * - `x-envoy*`: Envoy's own control headers (timeouts, retries); a policy must not steer Envoy: left denied. Envoy
 *   tests the bare prefix `x-envoy` (its header_prefix), so `x-envoyfoo` is denied as well as `x-envoy-foo`.
 * - removing `:`-headers or `host`: Envoy never allows it, whatever the rules.
 * A denied edit is dropped (counted by Envoy's `rejected_header_mutations`), not an error.
 */
export const SHIPPED_MUTATION_RULES: MutationRules = { allowExpression: "host|:authority" };

export type MutationOp = "set" | "append" | "remove";

/** Bounded set (a metric label): why Envoy drops an edit. */
export type DropReason = "never-removable" | "routing-header" | "pseudo-header-append" | "system-header" | "envoy-header" | "disallowed";

/** Envoy's default header_prefix: mutation_rules.cc denies every name starting with it, dash or not. */
const ENVOY_HEADER_PREFIX = "x-envoy";

const ROUTING_HEADERS = new Set(["host", ":authority", ":method", ":scheme"]);

const compiled = new Map<string, RegExp>();
function fullMatch(pattern: string, name: string): boolean {
  let re = compiled.get(pattern);
  if (!re) compiled.set(pattern, (re = new RegExp(`^(?:${pattern})$`)));
  return re.test(name);
}

/** Envoy's Checker::isAllowed order: undefined = applied, else why it is dropped. `key` lower case. */
export function dropReason(key: string, op: MutationOp, rules: MutationRules = SHIPPED_MUTATION_RULES): DropReason | undefined {
  if (op === "remove" && (key.startsWith(":") || key === "host")) return "never-removable";
  if (rules.disallowExpression !== undefined && fullMatch(rules.disallowExpression, key)) return "disallowed";
  if (rules.allowExpression !== undefined && fullMatch(rules.allowExpression, key)) return undefined;
  if (rules.disallowAll) return "disallowed";
  if (ROUTING_HEADERS.has(key) && !rules.allowAllRouting) return "routing-header";
  if (key.startsWith(":") && op === "append") return "pseudo-header-append";
  if (key.startsWith(":") && rules.disallowSystem) return "system-header";
  if (key.startsWith(ENVOY_HEADER_PREFIX) && !rules.allowEnvoy) return "envoy-header";
  return undefined;
}

export interface DroppedEdit {
  header: string;
  op: MutationOp;
  reason: DropReason;
}

/** The edits of `edits` Envoy would drop. `add` counts as append (the header may exist). */
export function droppedEdits(edits: HeaderEdits | undefined, rules: MutationRules = SHIPPED_MUTATION_RULES): DroppedEdit[] {
  if (!edits) return [];
  const out: DroppedEdit[] = [];
  const check = (header: string, op: MutationOp) => {
    const reason = dropReason(header.toLowerCase(), op, rules);
    if (reason) out.push({ header: header.toLowerCase(), op, reason });
  };
  for (const [k] of edits.set) check(k, "set");
  for (const [k] of edits.add) check(k, "append");
  for (const k of edits.remove) check(k, "remove");
  return out;
}

export type EditPhase = "request" | "response" | "local-reply";

/** Edits of a decision Envoy would drop, by the phase they are sent in (a local reply's headers too). */
export function decisionDrops(decision: Decision, rules: MutationRules = SHIPPED_MUTATION_RULES): Array<DroppedEdit & { phase: EditPhase }> {
  if (decision.type === "respond") {
    if (decision.headers.length === 0) return [];
    return droppedEdits({ set: decision.headers, add: [], remove: [] }, rules).map((d) => ({ ...d, phase: "local-reply" as const }));
  }
  if (!decision.requestHeaders && !decision.responseHeaders) return [];
  return [
    ...droppedEdits(decision.requestHeaders, rules).map((d) => ({ ...d, phase: "request" as const })),
    ...droppedEdits(decision.responseHeaders, rules).map((d) => ({ ...d, phase: "response" as const })),
  ];
}

/** "set :scheme (routing-header), remove host (never-removable)" */
export function describeDropped(dropped: readonly DroppedEdit[]): string {
  return dropped.map((d) => `${d.op} ${d.header} (${d.reason})`).join(", ");
}

/** envoy.yaml's snake_case mutation_rules → MutationRules (unset fields left out). */
export function fromEnvoyMutationRules(yaml: Record<string, unknown>): MutationRules {
  const out: MutationRules = {};
  const flag = (k: string, v: unknown) => v === true && Object.assign(out, { [k]: true });
  flag("allowAllRouting", yaml.allow_all_routing);
  flag("allowEnvoy", yaml.allow_envoy);
  flag("disallowSystem", yaml.disallow_system);
  flag("disallowAll", yaml.disallow_all);
  flag("disallowIsError", yaml.disallow_is_error);
  const regex = (v: unknown) => (typeof v === "object" && v !== null ? (v as { regex?: string }).regex : undefined);
  if (regex(yaml.allow_expression) !== undefined) out.allowExpression = regex(yaml.allow_expression);
  if (regex(yaml.disallow_expression) !== undefined) out.disallowExpression = regex(yaml.disallow_expression);
  return out;
}
