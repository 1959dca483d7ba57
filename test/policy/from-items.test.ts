// Legacy `from` plans (plans/from-items.ts) called directly: the regions a client falls in (multi-valued
// clients, cliques, the cap), the answers shared between clients and their bounded caches, rebuilds, regionTags.
import test from "ava";
import { buildFromPlan, FROM_CACHE_ENTRIES, matchFrom, regionTags, type FromPlan } from "../../extproc/policy/plans/from-items.js";
import type { Policy, TagSet } from "../../extproc/policy/model/types.js";

type Tags = Record<string, string> | undefined;

/** A MeshTrafficPermission whose from items have these tags (undefined: Mesh), each conf naming its place. */
function fromPolicy(name: string, ...items: Tags[]): Policy {
  const from = items.map((tags, i) => ({ targetRef: tags ? { kind: "MeshSubset", tags } : { kind: "Mesh" }, default: { id: `${name}${i}` } }));
  return { type: "MeshTrafficPermission", mesh: "default", name, spec: { targetRef: { kind: "Mesh" }, ...(items.length > 0 ? { from } : {}) } } as unknown as Policy;
}

/** A client from [key, values…] lists, in the order given. */
function client(...tags: [string, ...string[]][]): TagSet {
  return new Map(tags.map(([k, ...vs]) => [k, new Set(vs)]));
}

const COMPONENTS = { cliques: false, intersectFixed: true };

let calls = 0;
/** A key prefix new to this process: cliques are memoized by their subsets' text (for a warm mutation worker's life too). */
const freshPrefix = () => `f${++calls}.${Math.random().toString(36).slice(2)}.`;
const positives = (plan: FromPlan, c: TagSet) => matchFrom(plan, c).map((m) => [...m.positives]);

test("given a single-valued client, when matched, then its one region holds exactly its mentioned tags", (t) => {
  const plan = buildFromPlan("MeshTrafficPermission", [fromPolicy("p", { a: "1", b: "1" }, { a: "2" })], COMPONENTS);
  const [m, ...rest] = matchFrom(plan, client(["a", "1"], ["b", "1"], ["c", "9"]));
  t.deepEqual(rest, []);
  t.deepEqual([...m!.positives], [["a", "1"], ["b", "1"]]);
  t.deepEqual(m!.conf, { id: "p0" });
});

test("given a client with two values of a key, when matched, then it falls in one region per value, in value order", (t) => {
  const plan = buildFromPlan("MeshTrafficPermission", [fromPolicy("p", { k: "1" }, { k: "2" }, { j: "1" })], COMPONENTS);
  t.deepEqual(positives(plan, client(["k", "2", "1"], ["j", "1"])), [[["k", "1"], ["j", "1"]], [["k", "2"], ["j", "1"]]]);
  t.deepEqual(matchFrom(plan, client(["k", "2", "1"])).map((m) => m.conf), [{ id: "p0" }, { id: "p1" }]);
});

test("given a client whose values make more than 256 regions, when matched, then only the first 256 are taken", (t) => {
  const ks = Array.from({ length: 17 }, (_, i) => `k${i}`);
  const js = Array.from({ length: 16 }, (_, i) => `j${i}`);
  const plan = buildFromPlan("MeshTrafficPermission", [fromPolicy("p", ...ks.map((v) => ({ k: v })), ...js.map((v) => ({ j: v })))], COMPONENTS);
  t.is(matchFrom(plan, client(["k", ...ks], ["j", ...js])).length, 256);
});

test("given a path of subsets a–b–c grouped as cliques, when a client in both cliques is matched, then it gets one region per clique", (t) => {
  const [a, b] = [`${freshPrefix()}a`, `${freshPrefix()}b`];
  const plan = buildFromPlan("MeshTrafficPermission", [fromPolicy("p", { [a]: "1", [b]: "1" }, { [a]: "1" }, { [a]: "1", [b]: "2" })], { cliques: true, intersectFixed: true });
  t.deepEqual(positives(plan, client([a, "1"], [b, "1"])), [[[a, "1"], [b, "1"]], [[a, "1"]]]);
});

test("given a clique whose items name two values of one key (before #12340), when a client with one of them is matched, then its region has both tags", (t) => {
  const u = freshPrefix();
  const [k, j] = [`${u}k`, `${u}j`];
  const plan = buildFromPlan("MeshTrafficPermission", [fromPolicy("p", { [k]: "1", [j]: "1" }, { [`${u}m`]: "1", [j]: "2" })], { cliques: true, intersectFixed: false });
  const [m, ...rest] = matchFrom(plan, client([k, "1"], [j, "1"]));
  t.deepEqual(rest, []);
  t.deepEqual([...m!.positives].sort(), [[j, "1"], [k, "1"]]);
  t.deepEqual(m!.conf, { id: "p0" });
});

test("given two clients that differ only in tags no item names and in tag order, when matched, then they share one answer", (t) => {
  const plan = buildFromPlan("MeshTrafficPermission", [fromPolicy("p", { app: "web", zone: "z1" })], COMPONENTS);
  const first = matchFrom(plan, client(["app", "web"], ["zone", "z1"]));
  t.is(matchFrom(plan, client(["zone", "z1", "z9"], ["other", "x"], ["app", "web"])), first);
  t.is(first.length, 1);
});

test("given clients that reach one region through different tag orders, when matched, then the region's match is merged once", (t) => {
  const plan = buildFromPlan("MeshTrafficPermission", [fromPolicy("p", { a: "1", b: "1" }, { a: "2" })], COMPONENTS);
  const [ab] = matchFrom(plan, client(["a", "1"], ["b", "1"]));
  const both = matchFrom(plan, client(["b", "1"], ["a", "1", "2"]));
  t.is(both.find((m) => m.positives.get("a") === "1"), ab);
  t.is(plan.merges, 2);
});

/** A plan with one item per value v0…v{n-1} of key k. */
function wide(n: number): FromPlan {
  return buildFromPlan("MeshTrafficPermission", [fromPolicy("w", ...Array.from({ length: n }, (_, i) => ({ k: `v${i}` })))], COMPONENTS);
}

test("given a full per-client cache, when it is asked again, then it answers; when one more client comes, then it starts over", (t) => {
  const plan = wide(FROM_CACHE_ENTRIES + 1);
  const one = (i: number) => matchFrom(plan, client(["k", `v${i}`]));
  const first = one(0);
  for (let i = 1; i < FROM_CACHE_ENTRIES; i++) one(i);
  t.is(one(0), first, "a full cache still answers");
  one(FROM_CACHE_ENTRIES);
  const again = one(0);
  t.not(again, first);
  t.deepEqual(again, first);
});

test("given a full region cache, when one more region is merged, then the cache starts over (earlier regions are merged again)", (t) => {
  const plan = wide(FROM_CACHE_ENTRIES + 1);
  for (let i = 0; i < FROM_CACHE_ENTRIES; i++) matchFrom(plan, client(["k", `v${i}`]));
  matchFrom(plan, client(["k", "v0", "v1"]));
  t.is(plan.merges, FROM_CACHE_ENTRIES, "a full region cache still answers");
  matchFrom(plan, client(["k", `v${FROM_CACHE_ENTRIES}`]));
  matchFrom(plan, client(["k", "v0", "v2"]));
  t.is(plan.merges, FROM_CACHE_ENTRIES + 3);
});

test("given a plan, when a policy without from items is replaced by an equal new object, then the rebuilt plan shares the tag index", (t) => {
  const previous = buildFromPlan("MeshTrafficPermission", [fromPolicy("p", { app: "web" }), fromPolicy("none")], COMPONENTS);
  const rebuilt = buildFromPlan("MeshTrafficPermission", [previous.policies[0]!, fromPolicy("none")], COMPONENTS, previous);
  t.is(rebuilt.byTag, previous.byTag);
  t.is(rebuilt.tagValues, previous.tagValues);
});

test("given a plan built without grouping, when a policy's second tag changes, then the rebuild needs no grouping either", (t) => {
  const p = fromPolicy("p", { app: "web", zone: "z1" });
  const previous = buildFromPlan("MeshTrafficPermission", [p, fromPolicy("q", { app: "api" })]);
  const edited = fromPolicy("q", { app: "api", zone: "z2" });
  const rebuilt = buildFromPlan("MeshTrafficPermission", [p, edited], undefined, previous);
  t.deepEqual([...rebuilt.tagValues.get("zone")!].sort(), ["z1", "z2"]);
  t.is(rebuilt.cliques, undefined);
});

test("given a region, when written as Kuma writes it, then keys are sorted, a chosen key is positive and the others list every value negated, sorted", (t) => {
  const plan = buildFromPlan("MeshTrafficPermission", [fromPolicy("p", { zone: "z2" }, { app: "web", zone: "z1" }, { app: "api" })], COMPONENTS);
  t.deepEqual(regionTags(plan, new Map([["zone", "z1"]])), [
    { key: "app", value: "api", not: true },
    { key: "app", value: "web", not: true },
    { key: "zone", value: "z1", not: false },
  ]);
  t.deepEqual(regionTags(plan, new Map([["app", "web"], ["zone", "z2"]])), [
    { key: "app", value: "web", not: false },
    { key: "zone", value: "z2", not: false },
  ]);
});

test("given tags whose texts run together alike (a=b c=d, a= bc=d), when both clients are matched, then each gets its own region", (t) => {
  const plan = buildFromPlan("MeshTrafficPermission", [fromPolicy("p", { a: "b", c: "d" }, { a: "", bc: "d" })], COMPONENTS);
  t.deepEqual(matchFrom(plan, client(["a", "b"], ["c", "d"])).map((m) => m.conf), [{ id: "p0" }]);
  t.deepEqual(matchFrom(plan, client(["a", ""], ["bc", "d"])).map((m) => m.conf), [{ id: "p1" }]);
});
