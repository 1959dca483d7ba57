// The 2.10+ `rules[]` list of one inbound and policy kind (BuildInboundRules in
// pkg/plugins/policies/core/rules/inbound at v2.14.3): candidates from the selecting policies in precedence
// order (MRL `from` items folded in as catch-alls), one rule per match, stable-sorted by match specificity.
import type { ClientFacts } from "../model/client.js";
import type { Conf } from "../selection/merge.js";
import { KIND_TRAITS, type Policy, type PolicyType, type RuleMatch } from "../model/types.js";

/** One rule: its matches (ORed; one after 2.14's expansion; undefined = catch-all) and the entry's whole `default`. */
export interface InboundRuleEntry {
  policy: Policy;
  /** `rules[i]`, or `from[i]` for MRL's from-as-rules. */
  rule: string;
  ruleIndex: number;
  matches?: RuleMatch[];
  conf: Conf;
}

export interface RulesPlan {
  kind: PolicyType;
  /** Policies whose rules (or folded `from`) are in `rules`, ascending priority. */
  policies: Policy[];
  /** `from`-based policies left out because this inbound has rules of the kind (MTP, MFI: plugin/v1alpha1/plugin.go). */
  ignoredFrom: Policy[];
  rules: InboundRuleEntry[];
  /** Per-client results (keyed by SPIFFE ID and SNI): what matches depends only on those. */
  cache: Map<string, unknown>;
  /** Built on first use: rules that can only match one exact SPIFFE ID, by that ID; the rest in `scan`. */
  index?: { byExact: Map<string, number[]>; scan: number[] };
}

/**
 * The rules that may hold for this client, in rule order: every rule except those whose matches (for MTP: list
 * entries) are all SPIFFE Exact matches of other IDs. Keeps per-client work independent of the rule count.
 */
export function candidateRules(plan: RulesPlan, client: Pick<ClientFacts, "spiffe">): InboundRuleEntry[] {
  plan.index ??= buildIndex(plan);
  const exact = client.spiffe !== undefined ? plan.index.byExact.get(client.spiffe) : undefined;
  if (!exact) return plan.index.scan.map((i) => plan.rules[i]!);
  return [...plan.index.scan, ...exact].sort((a, b) => a - b).map((i) => plan.rules[i]!);
}

function buildIndex(plan: RulesPlan): NonNullable<RulesPlan["index"]> {
  const byExact = new Map<string, number[]>();
  const scan: number[] = [];
  plan.rules.forEach((r, i) => {
    const ms = r.matches ?? (plan.kind === "MeshTrafficPermission" ? MTP_LIST_FIELDS.flatMap((f) => (r.conf[f] as RuleMatch[] | undefined) ?? []) : undefined);
    const ids = ms && ms.length > 0 && ms.every((m) => m.spiffeID?.type === "Exact" && !m.sni) ? new Set(ms.map((m) => m.spiffeID!.value)) : undefined;
    if (!ids) scan.push(i);
    else for (const id of ids) byExact.set(id, [...(byExact.get(id) ?? []), i]);
  });
  return { byExact, scan };
}

const MTP_LIST_FIELDS = ["allow", "allowWithShadowDeny", "deny"] as const;

export const RULES_CACHE_ENTRIES = 4096;

/** The result of `compute` for this client on this plan, computed once per distinct SPIFFE ID + SNI + source. */
export function perClient<T>(plan: RulesPlan, client: Pick<ClientFacts, "spiffe" | "sni" | "source" | "ruleKey">, compute: () => T): T {
  // Kept on the (cached) identity: the same string object hashes once, not on every request. The source is in
  // the key because cached outcomes carry reason texts that name it.
  const key = (client.ruleKey ??= `${client.spiffe ?? ""}\u0000${client.sni ?? ""}\u0000${client.source}`);
  const cached = plan.cache.get(key);
  if (cached !== undefined || plan.cache.has(key)) return cached as T;
  const value = compute();
  if (plan.cache.size >= RULES_CACHE_ENTRIES) plan.cache.clear();
  plan.cache.set(key, value);
  return value;
}

/**
 * The rules plan of `sorted` (ascending priority) for `kind`, or undefined when no selecting policy has rules
 * (then the legacy `from` path stays in force). `expand`: one rule per match, sorted by specificity (2.14);
 * 2.12–2.13 list rule entries as written.
 */
export function buildRulesPlan(kind: PolicyType, sorted: readonly Policy[], expand: boolean): RulesPlan | undefined {
  if (!sorted.some((p) => (p.spec.rules?.length ?? 0) > 0)) return undefined;
  const plan: RulesPlan = { kind, policies: [], ignoredFrom: [], rules: [], cache: new Map() };
  for (const policy of sorted) {
    const rules = policy.spec.rules ?? [];
    if (rules.length > 0) {
      plan.policies.push(policy);
      rules.forEach((r, i) => {
        const entry = { policy, rule: `rules[${i}]`, ruleIndex: i, conf: r.default };
        if (!r.matches || r.matches.length === 0) plan.rules.push(entry);
        else if (expand) for (const match of r.matches) plan.rules.push({ ...entry, matches: [match] });
        else plan.rules.push({ ...entry, matches: r.matches });
      });
    } else if (KIND_TRAITS[kind].fromAsRules && (policy.spec.from?.length ?? 0) > 0) {
      plan.policies.push(policy);
      policy.spec.from!.forEach((f, i) => plan.rules.push({ policy, rule: `from[${i}]`, ruleIndex: i, conf: (f.default ?? {}) as Conf }));
    } else if ((policy.spec.from?.length ?? 0) > 0) plan.ignoredFrom.push(policy);
  }
  if (expand) plan.rules = stableSort(plan.rules, (a, b) => specificity(b.matches?.[0]) - specificity(a.matches?.[0]));
  return plan;
}

/** SPIFFE Exact (4) > Prefix (2) > none (0); then with `sni` (+1). Prefix length is not compared here. */
function specificity(m: RuleMatch | undefined): number {
  if (!m) return 0;
  const spiffe = m.spiffeID?.type === "Exact" ? 4 : m.spiffeID?.type === "Prefix" ? 2 : 0;
  return spiffe + (m.sni ? 1 : 0);
}

export function stableSort<T>(xs: readonly T[], cmp: (a: T, b: T) => number): T[] {
  return xs.map((x, i) => [x, i] as const).sort((a, b) => cmp(a[0], b[0]) || a[1] - b[1]).map(([x]) => x);
}

/**
 * Whether a Match holds for a client: every field it sets must hold (AND). SPIFFE Exact is string equality and
 * Prefix a raw string prefix, both against the client's URI SANs joined with "," (Envoy's uri_san input);
 * sni Exact compares the TLS SNI. A match with neither field holds for nobody.
 */
export function ruleHolds(rule: Pick<InboundRuleEntry, "matches">, client: Pick<ClientFacts, "spiffe" | "sni">): boolean {
  return !rule.matches || rule.matches.some((m) => matchHolds(m, client));
}

export function matchHolds(m: RuleMatch, client: Pick<ClientFacts, "spiffe" | "sni">): boolean {
  if (!m.spiffeID && !m.sni) return false;
  if (m.spiffeID) {
    const id = client.spiffe;
    if (id === undefined) return false;
    if (m.spiffeID.type === "Exact" ? id !== m.spiffeID.value : !id.startsWith(m.spiffeID.value)) return false;
  }
  if (m.sni && client.sni !== m.sni.value) return false;
  return true;
}

/** Text form of a match for explanations: `spiffeID Prefix spiffe://…` / `sni orders.mesh` / `*`. */
export function describeMatch(m: RuleMatch | undefined): string {
  if (!m) return "*";
  const parts: string[] = [];
  if (m.spiffeID) parts.push(`spiffeID ${m.spiffeID.type} ${m.spiffeID.value}`);
  if (m.sni) parts.push(`sni ${m.sni.value}`);
  return parts.join(" and ") || "{}";
}
