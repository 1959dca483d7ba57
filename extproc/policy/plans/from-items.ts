// `from[]` items of the policies selecting one inbound, concatenated in precedence order, with a tag index,
// and per-client evaluation (the answer Rules.Compute in pkg/plugins/policies/core/rules/rules.go gives,
// evaluated directly instead of over a built rule list; exact for multi-valued clients too).
import type { LimitPlan } from "./limit-plan.js";
import { mergeConfs, type Conf } from "../selection/merge.js";
import type { FaultPlan } from "./fault-plan.js";
import { asSubset } from "../selection/match.js";
import type { DirectionalItem, Policy, PolicyType, Tag, TagSet, TargetRef } from "../model/types.js";
import { groupSubsets, subsetText, type GroupingRules } from "./subset-groups.js";

export interface FromItem {
  policy: Policy;
  /** Index in the policy's own from[] list. */
  index: number;
  /** Positive tags the client must carry (empty: Mesh, everyone). */
  subset: Tag[];
  conf: Conf;
  /** Position in the concatenated list: later wins. */
  order: number;
}

/** The region of clients a rule covers: one chosen value per constrained key; other keys are "none of T[k]". */
export interface FromMatch {
  positives: Map<string, string>;
  conf: Conf;
  /** Contributing items in merge order (the last one wins conflicts). */
  items: FromItem[];
  /** MeshFaultInjection: `conf.http` compiled, set on first use (a region's match is shared by every client in it). */
  faultPlan?: FaultPlan;
  /** MeshRateLimit: `conf.local` compiled, set on first use. */
  limitPlan?: LimitPlan;
}

export interface FromPlan {
  kind: PolicyType;
  /** Policies selecting the inbound, ascending priority. */
  policies: Policy[];
  items: FromItem[];
  /** The Mesh items' places in `items` (their orders), ascending. */
  meshItems: number[];
  /**
   * The other items' places in `items` by their first positive tag "key\u0000value", ascending: places, not items,
   * so that a plan rebuilt for a changed policy whose items keep their keys shares this index (buildFromPrevious).
   */
  byTag: Map<string, number[]>;
  /** Every positive tag value mentioned per key (Kuma's T). */
  tagValues: Map<string, Set<string>>;
  /**
   * The regions a client falls in, by mentionedKey (the client's tags this plan mentions): clients that differ
   * only in tags no item names (every new client of a mesh, as a rule) share one entry.
   */
  cache: Map<string, FromMatch[]>;
  /** Each region's match (null: no item covers it) by positivesKey, merged once however many clients and cliques reach it. */
  regions: Map<string, FromMatch | null>;
  /** Regions merged so far (mergeConfs runs): grows with the distinct regions clients reach, not with clients. */
  merges: number;
  /** Kuma's maximal cliques (kumahq/kuma #15412), as each one's tag values per key, in Kuma's group order; absent: one region over all keys. */
  cliques?: Array<Map<string, Set<string>>>;
}

const MAX_REGIONS_PER_CLIENT = 256;

/** asSubset by targetRef object: a validated policy is never changed, so an unchanged policy's items keep theirs. */
const subsets = new WeakMap<object, Tag[]>();
function subsetOf(ref: TargetRef): Tag[] {
  let subset = subsets.get(ref);
  if (subset === undefined) {
    subset = asSubset(ref);
    subsets.set(ref, subset);
  }
  return subset;
}
export const FROM_CACHE_ENTRIES = 4096;

/**
 * The plan of `sorted`. With `previous` (the plan this one replaces, for the same kind and grouping), the items of
 * every policy that is the same object as at its place there are that plan's, and only the changed policies'
 * items are made: what follows is the plan a build from nothing gives, item for item (buildFromPrevious).
 */
export function buildFromPlan(kind: PolicyType, sorted: Policy[], grouping?: GroupingRules, previous?: FromPlan): FromPlan {
  const plan: FromPlan = { kind, policies: sorted, items: [], meshItems: [], byTag: new Map(), tagValues: new Map(), cache: new Map(), regions: new Map(), merges: 0 };
  if (previous && buildFromPrevious(plan, previous, grouping)) return plan;
  for (const policy of sorted) {
    (policy.spec.from ?? []).forEach((raw, index) => {
      const item = fromItem(policy, index, raw, plan.items.length);
      plan.items.push(item);
      const key = tagKeyOf(item);
      if (key === undefined) {
        plan.meshItems.push(item.order);
        return;
      }
      if (!plan.byTag.has(key)) plan.byTag.set(key, []);
      plan.byTag.get(key)!.push(item.order);
      addTagValues(plan.tagValues, item);
    });
  }
  if (grouping?.cliques) plan.cliques = cliqueTagValues(plan.items, grouping);
  return plan;
}

function fromItem(policy: Policy, index: number, raw: DirectionalItem, order: number): FromItem {
  return { policy, index, subset: subsetOf(raw.targetRef), conf: (raw.default ?? {}) as Conf, order };
}

/** Adds the item's tag values to Kuma's T (every positive value mentioned per key). */
function addTagValues(tagValues: Map<string, Set<string>>, item: FromItem): void {
  for (const t of item.subset) {
    if (!tagValues.has(t.key)) tagValues.set(t.key, new Set());
    tagValues.get(t.key)!.add(t.value);
  }
}

/** The item's key in byTag ("key\u0000value" of its first tag), or undefined for a Mesh item (in meshItems). */
function tagKeyOf(item: FromItem): string | undefined {
  const first = item.subset[0];
  return first === undefined ? undefined : `${first.key}\u0000${first.value}`;
}

/**
 * Fills `plan` (empty, for the same kind) from `previous` when only a few policies changed, each keeping its place
 * and its number of `from` items, and each new item its byTag key (or Mesh-ness): the unchanged policies' items,
 * and byTag and meshItems (places, the same), are those of `previous` (shared, never changed in place: the old
 * plan stays in force until the swap); tag values and cliques are reused when every subset is as it was.
 * False (plan untouched) when the edit is not of that shape.
 */
function buildFromPrevious(plan: FromPlan, previous: FromPlan, grouping: GroupingRules | undefined): boolean {
  const sorted = plan.policies;
  if (previous.kind !== plan.kind || previous.policies.length !== sorted.length) return false;
  const replaced: Array<[FromItem, FromItem]> = [];
  let changedPolicies = 0;
  let start = 0;
  for (let i = 0; i < sorted.length; i++) {
    const policy = sorted[i]!;
    const was = previous.policies[i]!;
    const from = policy.spec.from ?? [];
    const count = (was.spec.from ?? []).length;
    if (policy === was) {
      start += count;
      continue;
    }
    if (from.length !== count || ++changedPolicies * 2 > sorted.length) return false;
    for (let index = 0; index < count; index++) {
      const old = previous.items[start + index]!;
      const raw = from[index]!;
      const item = fromItem(policy, index, raw, old.order);
      if (tagKeyOf(item) !== tagKeyOf(old)) return false;
      replaced.push([old, item]);
    }
    start += count;
  }
  if (start !== previous.items.length) return false;
  plan.items = previous.items.slice();
  let sameSubsets = true;
  for (const [old, item] of replaced) {
    plan.items[item.order] = item;
    if (old.subset !== item.subset && subsetText(old.subset) !== subsetText(item.subset)) sameSubsets = false;
  }
  plan.meshItems = previous.meshItems;
  plan.byTag = previous.byTag;
  if (sameSubsets) {
    plan.tagValues = previous.tagValues;
    if (previous.cliques) plan.cliques = previous.cliques;
    return true;
  }
  for (const item of plan.items) addTagValues(plan.tagValues, item);
  if (grouping?.cliques) plan.cliques = cliqueTagValues(plan.items, grouping);
  return true;
}

/** Each grouping's tag values: groupSubsets answers the same input with the same groups, so its answer keys them. */
const tagValuesOfGroups = new WeakMap<object, Array<Map<string, Set<string>>>>();

function cliqueTagValues(items: readonly FromItem[], grouping: GroupingRules): Array<Map<string, Set<string>>> {
  const groups = groupSubsets(items.map((i) => i.subset), grouping);
  const known = tagValuesOfGroups.get(groups);
  if (known) return known;
  const perGroup = groups.map((group) => {
    const values = new Map<string, Set<string>>();
    for (const t of group.flatMap((i) => items[i]!.subset)) {
      if (!values.has(t.key)) values.set(t.key, new Set());
      values.get(t.key)!.add(t.value);
    }
    return values;
  });
  tagValuesOfGroups.set(groups, perGroup);
  return perGroup;
}

/**
 * The rules (regions with a merged conf) this client falls in, most positive tags first. A single-valued
 * client falls in exactly one region; a client with several values for a key may fall in several.
 */
export function matchFrom(plan: FromPlan, client: TagSet): FromMatch[] {
  const key = mentionedKey(client, plan.tagValues);
  const cached = plan.cache.get(key);
  if (cached) return cached;
  const out: FromMatch[] = [];
  // With cliques, each clique has its own regions: a client may fall in one per clique, the first (most
  // positives, then clique order) deciding a first-match kind, any of them allowing for MTP's RBAC. Cliques the
  // client has no tag of all give the same region (no positives): one shared match.
  for (const known of plan.cliques ?? [plan.tagValues]) {
    for (const positives of regions(clientChoices(client, known))) {
      const match = regionMatch(plan, positives);
      if (match) out.push(match);
    }
  }
  out.sort((a, b) => b.positives.size - a.positives.size);
  if (plan.cache.size >= FROM_CACHE_ENTRIES) plan.cache.clear();
  plan.cache.set(key, out);
  return out;
}

/**
 * The client's tags `known` mentions, as sorted text ("" when none): every clique's tag set is part of the
 * plan's, so clients with the same key fall in the same regions.
 */
export function mentionedKey(client: TagSet, known: ReadonlyMap<string, ReadonlySet<string>>): string {
  let hits: string[] | undefined;
  for (const [key, values] of client) {
    const mentioned = known.get(key);
    if (!mentioned) continue;
    for (const v of values) if (mentioned.has(v)) (hits ??= []).push(`${key}\u0000${v}`);
  }
  return hits ? hits.sort().join("\u0001") : "";
}

function regionMatch(plan: FromPlan, positives: Map<string, string>): FromMatch | undefined {
  const key = positivesKey(positives);
  const known = plan.regions.get(key);
  if (known !== undefined) return known ?? undefined;
  const items = coveringItems(plan, positives);
  const match = items.length > 0 ? { positives, items, conf: mergeConfs(items.map((i) => i.conf)) } : null;
  if (match) plan.merges++;
  if (plan.regions.size >= FROM_CACHE_ENTRIES) plan.regions.clear();
  plan.regions.set(key, match);
  return match ?? undefined;
}

function positivesKey(positives: ReadonlyMap<string, string>): string {
  if (positives.size === 0) return "";
  return [...positives].map(([k, v]) => `${k}\u0000${v}`).sort().join("\u0001");
}

/** The client's values Kuma's tag set `known` mentions, per key. */
function clientChoices(client: TagSet, known: ReadonlyMap<string, ReadonlySet<string>>): Array<[string, string[]]> {
  const choices: Array<[string, string[]]> = [];
  for (const [key, values] of client) {
    const mentioned = known.get(key);
    if (!mentioned) continue;
    const hit = [...values].filter((v) => mentioned.has(v)).sort();
    if (hit.length > 0) choices.push([key, hit]);
  }
  return choices;
}

/** Every combination of one chosen value per key (cartesian product), capped. */
function regions(choices: Array<[string, string[]]>): Array<Map<string, string>> {
  let out: Array<Map<string, string>> = [new Map()];
  for (const [key, values] of choices) {
    if (values.length === 1) {
      for (const m of out) m.set(key, values[0]!);
      continue;
    }
    const next: Array<Map<string, string>> = [];
    for (const m of out) for (const v of values) if (next.length < MAX_REGIONS_PER_CLIENT) next.push(new Map(m).set(key, v));
    out = next;
  }
  return out;
}

function coveringItems(plan: FromPlan, positives: Map<string, string>): FromItem[] {
  const items = plan.meshItems.map((order) => plan.items[order]!);
  for (const [k, v] of positives) {
    for (const order of plan.byTag.get(`${k}\u0000${v}`) ?? []) {
      const item = plan.items[order]!;
      if (item.subset.every((t) => positives.get(t.key) === t.value)) items.push(item);
    }
  }
  return items.sort((a, b) => a.order - b.order);
}

/** The last contributing item that set `field` in its conf: the one that decided that field. */
export function decidingItem(match: FromMatch, field: string): FromItem | undefined {
  for (let i = match.items.length - 1; i >= 0; i--) if (match.items[i]!.conf[field] !== undefined) return match.items[i];
  return undefined;
}

/** The region as Kuma writes it: chosen positives plus, for other known keys, every value negated. */
export function regionTags(plan: FromPlan, positives: ReadonlyMap<string, string>): Tag[] {
  const tags: Tag[] = [];
  for (const key of [...plan.tagValues.keys()].sort()) {
    const v = positives.get(key);
    if (v !== undefined) tags.push({ key, value: v, not: false });
    else for (const nv of [...plan.tagValues.get(key)!].sort()) tags.push({ key, value: nv, not: true });
  }
  return tags;
}
