// MeshFaultInjection and MeshRateLimit on the 2.10+ rules path (plugin/xds/configurer.go of
// each at v2.14.3): MFI installs every matching rule's faults in rule order (catch-alls of different
// policies stack); MRL merges catch-alls into a base and layers the SPIFFE rules that match the client.
import type { ClientFacts } from "../model/client.js";
import { candidateRules, describeMatch, perClient, ruleHolds, stableSort, type InboundRuleEntry, type RulesPlan } from "../plans/inbound-rules.js";
import { mergeConfs, type Conf } from "../selection/merge.js";
import { compileFaults } from "./faults.js";
import { ROUTE_SCOPE, type LimitPlan } from "../plans/limit-plan.js";
import type { FaultPlan } from "../plans/fault-plan.js";
import type { ConfSource } from "../model/types.js";
import type { RuleMatch } from "../model/types.js";

/** The matching rules' `http` lists concatenated in rule order, compiled (`faults`), with each element's source. */
export interface StackedFaults extends FaultPlan {
  hits: InboundRuleEntry[];
  /** Source of element i of the concatenated list. */
  sourceOf: (element?: number) => ConfSource | undefined;
}

export function stackFaults(plan: RulesPlan, client: ClientFacts): StackedFaults {
  return perClient(plan, client, () => stack(plan, client));
}

function stack(plan: RulesPlan, client: ClientFacts): StackedFaults {
  const http: unknown[] = [];
  const owners: InboundRuleEntry[] = [];
  const hits = candidateRules(plan, client).filter((r) => ruleHolds(r, client));
  for (const r of hits) {
    for (const [i, f] of ((r.conf.http as unknown[] | undefined) ?? []).entries()) {
      http.push(f);
      owners.push({ ...r, rule: `${r.rule}.default.http[${i}]` });
    }
  }
  const sourceOf = (element?: number): ConfSource | undefined => {
    const owner = owners[element ?? 0];
    return owner ? { policy: owner.policy.name, rule: owner.rule } : undefined;
  };
  return { faults: compileFaults(http), hits, sourceOf };
}

export interface LayeredLimit {
  /** Undefined: no MRL conf applies to this client. */
  conf?: Conf;
  /** Contributing rules in merge order (the last one decided conflicts). */
  hits: InboundRuleEntry[];
  /** Envoy route the client lands on: the base one, or the duplicated route of the most specific match. */
  route: string;
  /** The conf compiled for the limit step, set on first use (this result is cached per client). */
  limit?: LimitPlan;
}

/**
 * Base = catch-all rules merged in order (only when there is one); then every rule with a SPIFFE match and an
 * HTTP part that matches the client, least to most specific (Prefix shorter → longer → Exact; equal ones in
 * policy order). SNI-only rules never become routes on a sidecar inbound.
 */
export function layerLimits(plan: RulesPlan, client: ClientFacts): LayeredLimit {
  return perClient(plan, client, () => layer(plan, client));
}

function layer(plan: RulesPlan, client: ClientFacts): LayeredLimit {
  const base = baseOf(plan);
  const spiffe = candidateRules(plan, client).filter((r) => r.matches?.[0]?.spiffeID && hasHttp(r.conf) && ruleHolds(r, client));
  if (spiffe.length === 0) return base.conf ? { conf: base.conf, hits: base.hits, route: "base" } : { hits: [], route: "base" };
  const layered = stableSort(spiffe, (a, b) => matchRank(a.matches![0]!) - matchRank(b.matches![0]!));
  const top = layered[layered.length - 1]!;
  return { conf: mergeConfs([base.conf ?? {}, ...layered.map((r) => r.conf)]), hits: [...base.hits, ...layered], route: describeMatch(top.matches![0]) };
}

/** The catch-all rules merged in order, once per plan (undefined conf when there is no catch-all). */
function baseOf(plan: RulesPlan): { conf?: Conf; hits: InboundRuleEntry[] } {
  const cached = plan.cache.get(BASE_KEY) as { conf?: Conf; hits: InboundRuleEntry[] } | undefined;
  if (cached) return cached;
  const hits = plan.rules.filter((r) => !r.matches);
  const base = hits.length > 0 ? { conf: mergeConfs(hits.map((r) => r.conf)), hits } : { hits };
  plan.cache.set(BASE_KEY, base);
  return base;
}

/** Cache key of the base conf: cannot collide with a client key (those contain "\u0000"). */
const BASE_KEY = "base";

/** Bucket scope of a route: the inbound alone for the base route, else inbound + match. */
export function limitScope(inbound: string, route: string): string {
  return route === "base" ? inbound : `${inbound}${ROUTE_SCOPE}${route}`;
}

/** The last contributing rule that set `field`: the one an explanation names. */
export function decidingRule(hits: readonly InboundRuleEntry[], field: string): ConfSource | undefined {
  for (let i = hits.length - 1; i >= 0; i--) if (hits[i]!.conf[field] !== undefined) return { policy: hits[i]!.policy.name, rule: hits[i]!.rule };
  return undefined;
}

function hasHttp(conf: Conf): boolean {
  const local = conf.local as { http?: unknown } | undefined;
  return local?.http !== undefined;
}

/** Prefix rules by length, then Exact above every Prefix. */
function matchRank(m: RuleMatch): number {
  const len = m.spiffeID?.value.length ?? 0;
  return m.spiffeID?.type === "Exact" ? 1e6 + len : len;
}
