// Memos of the one-policy-edit path: subset texts, targetRef subsets and policy keys kept by object read as built anew.
import test from "ava";
import { groupSubsets, subsetText } from "../../extproc/policy/plans/subset-groups.js";
import { dedupe } from "../../extproc/policy/selection/policy-set.js";
import { compile } from "../../extproc/policy/plans/compile.js";
import { dataplaneFromTags } from "../../extproc/policy/documents/dataplane.js";
import { validatePolicyObject } from "../../extproc/policy/documents/parse.js";
import { reuseOrBuild, samePolicies } from "../../extproc/policy/plans/reuse.js";
import { buildFromPlan, matchFrom, type FromPlan } from "../../extproc/policy/plans/from-items.js";
import type { Policy, Tag } from "../../extproc/policy/model/types.js";

test("given subsets, when their text is taken, then it is JSON.stringify of their [not, key, value] triples, also the second time", (t) => {
  const subset: Tag[] = [{ key: "kuma.io/service", value: "a\"b", not: false }, { key: "shard", value: "s-1", not: true }];
  const expected = JSON.stringify(subset.map((x) => [x.not, x.key, x.value]));
  t.is(subsetText(subset), expected);
  t.is(subsetText(subset), expected);
  t.is(subsetText([]), "[]");
});

test("given the same subsets as new arrays and as kept ones, when grouped, then the groups are the same", (t) => {
  const a: Tag[] = [{ key: "k", value: "1", not: false }];
  const b: Tag[] = [{ key: "k", value: "2", not: false }];
  const rules = { cliques: true, intersectFixed: true };
  const first = groupSubsets([a, b, a], rules);
  t.deepEqual(groupSubsets([[...a], [...b], [...a]], rules), first);
  t.deepEqual(groupSubsets([[...b], [...a]], rules), groupSubsets([b, a], rules));
});

test("given a policy deduplicated once, when its name is changed and it is deduplicated again, then its new key counts", (t) => {
  const p = { type: "MeshTrafficPermission", mesh: "default", name: "a" } as Policy;
  const q = { type: "MeshTrafficPermission", mesh: "default", name: "b" } as Policy;
  t.deepEqual(dedupe([p, q]).duplicates, []);
  (q as { name: string }).name = "a";
  t.deepEqual(dedupe([p, q]), { policies: [q], duplicates: ["MeshTrafficPermission/default/a"] });
});

// A plan rebuilt from the previous one (one policy edited) is the plan a build from nothing gives, and shares what
// the edit left as it was: the unchanged policies' items, the tag index, and (subsets unchanged) tag values and cliques.
type FromSpec = [Record<string, string> | undefined, Record<string, unknown>];

function fromPolicy(name: string, from: FromSpec[] | undefined): Policy {
  const spec: Record<string, unknown> = { targetRef: { kind: "Mesh" } };
  if (from) spec.from = from.map(([tags, conf]) => ({ targetRef: tags ? { kind: "MeshSubset", tags } : { kind: "Mesh" }, default: conf }));
  return { type: "MeshTrafficPermission", mesh: "default", name, spec } as unknown as Policy;
}

function planView(plan: FromPlan) {
  const sets = (m: Map<string, Set<string>>) => [...m].map(([k, v]) => [k, [...v].sort()]).sort();
  return {
    kind: plan.kind,
    policies: plan.policies.map((p) => p.name),
    items: plan.items.map((i) => [i.policy.name, i.index, i.subset, i.conf, i.order]),
    meshItems: plan.meshItems,
    byTag: [...plan.byTag].sort(),
    tagValues: sets(plan.tagValues),
    cliques: plan.cliques?.map(sets),
  };
}

const FIXED_COMPONENTS = { cliques: false, intersectFixed: true };

function fourPolicies(): Policy[] {
  return [
    fromPolicy("a", [[undefined, { action: "Deny" }], [{ app: "web", zone: "z1" }, { action: "Allow" }]]),
    fromPolicy("none", undefined),
    fromPolicy("b", [[{ app: "api" }, { action: "Deny" }], [{ app: "web", zone: "z2" }, { action: "Deny" }]]),
    fromPolicy("c", [[{ zone: "z1" }, { action: "AllowWithShadowDeny" }]]),
  ];
}

const CLIENTS: [string, string][][] = [[["app", "web"], ["zone", "z1"]], [["app", "web"], ["zone", "z2"]], [["app", "api"]], [["zone", "z1"]], [["zone", "z3"]], []];

function matchesOf(plan: FromPlan) {
  return CLIENTS.map((tags) => {
    const client = new Map(tags.map(([k, v]) => [k, new Set([v])]));
    return matchFrom(plan, client).map((m) => [[...m.positives].sort(), m.conf, m.items.map((i) => `${i.policy.name}/${i.index}`)]);
  });
}

const rebuildCases: [string, (ps: Policy[]) => Policy[], boolean][] = [
  // [edit, the new list from the old, a few policies edited in place with their subsets unchanged (tag values and cliques shared)]
  ["a conf changed", (ps) => [ps[0]!, ps[1]!, fromPolicy("b", [[{ app: "api" }, { action: "Allow" }], [{ app: "web", zone: "z2" }, { action: "Deny" }]]), ps[3]!], true],
  ["a tag after the first changed", (ps) => [ps[0]!, ps[1]!, fromPolicy("b", [[{ app: "api" }, { action: "Deny" }], [{ app: "web", zone: "z1" }, { action: "Deny" }]]), ps[3]!], false],
  ["a tag after the first given a new value", (ps) => [fromPolicy("a", [[undefined, { action: "Deny" }], [{ app: "web", zone: "z9" }, { action: "Allow" }]]), ps[1]!, ps[2]!, ps[3]!], false],
  ["a first tag changed", (ps) => [ps[0]!, ps[1]!, ps[2]!, fromPolicy("c", [[{ app: "z1" }, { action: "Allow" }]])], false],
  ["a Mesh item made a subset", (ps) => [fromPolicy("a", [[{ app: "api" }, { action: "Deny" }], [{ app: "web", zone: "z1" }, { action: "Allow" }]]), ps[1]!, ps[2]!, ps[3]!], false],
  ["an item added", (ps) => [ps[0]!, ps[1]!, ps[2]!, fromPolicy("c", [[{ zone: "z1" }, { action: "Allow" }], [{ app: "api" }, { action: "Allow" }]])], false],
  ["a policy without from given one", (ps) => [ps[0]!, fromPolicy("none", [[{ app: "api" }, { action: "Allow" }]]), ps[2]!, ps[3]!], false],
  ["three of four policies changed", (ps) => [fromPolicy("a", [[undefined, { action: "Allow" }], [{ app: "web", zone: "z1" }, { action: "Deny" }]]), ps[1]!, fromPolicy("b", [[{ app: "api" }, { action: "Allow" }], [{ app: "web", zone: "z2" }, { action: "Allow" }]]), fromPolicy("c", [[{ zone: "z1" }, { action: "Deny" }]])], false],
  ["a policy removed", (ps) => [ps[0]!, ps[2]!, ps[3]!], true],
  ["a policy added", (ps) => [...ps, fromPolicy("d", [[{ zone: "z3" }, { action: "Deny" }]])], false],
  ["nothing changed", (ps) => [...ps], true],
];

for (const cliques of [false, true]) {
  const grouping = { cliques, intersectFixed: true };
  for (const [edit, change, sameSubsets] of rebuildCases) {
    test(`given a from plan (${cliques ? "cliques" : "components"}), when rebuilt from it after ${edit}, then it is the plan built from nothing`, (t) => {
      const before = fourPolicies();
      const previous = buildFromPlan("MeshTrafficPermission", before, grouping);
      matchesOf(previous);
      const after = change(before);
      const rebuilt = buildFromPlan("MeshTrafficPermission", after, grouping, previous);
      const fresh = buildFromPlan("MeshTrafficPermission", after, grouping);
      t.deepEqual(planView(rebuilt), planView(fresh));
      t.deepEqual(matchesOf(rebuilt), matchesOf(fresh));
      if (sameSubsets && after.length === before.length) {
        t.is(rebuilt.tagValues, previous.tagValues);
        t.is(rebuilt.cliques, previous.cliques);
      }
    });
  }
}

test("given a from plan, when one policy's conf is edited, then the other policies' items, the tag index and the Mesh items are shared", (t) => {
  const grouping = { cliques: true, intersectFixed: true };
  const before = fourPolicies();
  const previous = buildFromPlan("MeshTrafficPermission", before, grouping);
  const edited = fromPolicy("b", [[{ app: "api" }, { action: "Allow" }], [{ app: "web", zone: "z2" }, { action: "Deny" }]]);
  const rebuilt = buildFromPlan("MeshTrafficPermission", [before[0]!, before[1]!, edited, before[3]!], grouping, previous);
  t.is(rebuilt.items[0], previous.items[0]);
  t.is(rebuilt.items[1], previous.items[1]);
  t.is(rebuilt.items[4], previous.items[4]);
  t.not(rebuilt.items[2], previous.items[2]);
  t.is(rebuilt.items[2]!.policy, edited);
  t.deepEqual(rebuilt.items[2]!.conf, { action: "Allow" });
  t.is(rebuilt.byTag, previous.byTag);
  t.is(rebuilt.meshItems, previous.meshItems);
  t.is(rebuilt.tagValues, previous.tagValues);
  t.is(rebuilt.cliques, previous.cliques);
  t.not(rebuilt.items, previous.items, "the previous plan's item list is left as it was");
  t.is(previous.items[2]!.policy, before[2]);
});

test("given a from plan, when a tag after the first is edited, then the tag index is shared but the tag values are new", (t) => {
  const grouping = { cliques: true, intersectFixed: true };
  const before = fourPolicies();
  const previous = buildFromPlan("MeshTrafficPermission", before, grouping);
  const edited = fromPolicy("c", [[{ zone: "z7" }, { action: "Allow" }]]);
  const firstTag = fromPolicy("b", [[{ app: "api" }, { action: "Deny" }], [{ app: "web", zone: "z5" }, { action: "Deny" }]]);
  const rebuilt = buildFromPlan("MeshTrafficPermission", [before[0]!, before[1]!, firstTag, before[3]!], grouping, previous);
  t.is(rebuilt.byTag, previous.byTag);
  t.not(rebuilt.tagValues, previous.tagValues);
  t.deepEqual([...rebuilt.tagValues.get("zone")!].sort(), ["z1", "z5"]);
  t.deepEqual([...previous.tagValues.get("zone")!].sort(), ["z1", "z2"], "the previous plan's tag values are left as they were");
  // a changed first tag is not that shape: the index is built anew
  const moved = buildFromPlan("MeshTrafficPermission", [before[0]!, before[1]!, before[2]!, edited], grouping, previous);
  t.not(moved.byTag, previous.byTag);
  t.deepEqual(moved.byTag.get("zone\u0000z7"), [4]);
});

test("given a from plan of another kind, when a plan is built with it as the previous one, then it is the plan built from nothing", (t) => {
  const policies = fourPolicies();
  const other = buildFromPlan("MeshFaultInjection", policies, FIXED_COMPONENTS);
  const rebuilt = buildFromPlan("MeshTrafficPermission", policies, FIXED_COMPONENTS, other);
  t.deepEqual(planView(rebuilt), planView(buildFromPlan("MeshTrafficPermission", policies, FIXED_COMPONENTS)));
});

test("given policy lists, when compared for reuse, then they are the same when each policy is the same object or of the same content", (t) => {
  const p = fromPolicy("p", [[{ app: "web" }, { action: "Allow" }]]);
  const copy = fromPolicy("p", [[{ app: "web" }, { action: "Allow" }]]);
  const q = fromPolicy("p", [[{ app: "web" }, { action: "Deny" }]]);
  const cases: [string, Policy[], Policy[], boolean][] = [
    ["both empty", [], [], true],
    ["one longer", [p], [], false],
    ["one shorter", [], [p], false],
    ["the same object", [p], [p], true],
    ["a copy", [p], [copy], true],
    ["other content", [p], [q], false],
    ["same first, other second", [p, p], [copy, q], false],
    ["copies in order", [p, q], [copy, fromPolicy("p", [[{ app: "web" }, { action: "Deny" }]])], true],
  ];
  for (const [what, a, b, same] of cases) t.is(samePolicies(a, b), same, what);
});

test("given a plan built for some policies, when built again for equal inputs, then it is reused; for other inputs, then built anew", (t) => {
  const p = fromPolicy("p", [[{ app: "web" }, { action: "Allow" }]]);
  let builds = 0;
  const build = () => ({ n: ++builds });
  const first = reuseOrBuild(undefined, [p], build);
  t.deepEqual(first, { n: 1 });
  t.is(reuseOrBuild(first, [fromPolicy("p", [[{ app: "web" }, { action: "Allow" }]])], build), first, "same content");
  t.is(reuseOrBuild(first, [p], build, ""), first, "no extra is the empty extra");
  t.deepEqual(reuseOrBuild(first, [p], build, "mesh-b"), { n: 2 }, "other extra");
  t.deepEqual(reuseOrBuild(first, [], build), { n: 3 }, "other policies");
  t.deepEqual(reuseOrBuild({ n: 0 }, [p], build), { n: 4 }, "a previous plan not built here");
  const withExtra = reuseOrBuild(undefined, [p], build, "mesh-a");
  t.is(reuseOrBuild(withExtra, [p], build, "mesh-a"), withExtra);
  t.is(builds, 5);
});

function validPolicy(doc: object): Policy {
  const { policy, violations } = validatePolicyObject(doc);
  if (!policy) throw new Error(JSON.stringify(violations));
  return policy;
}

function backendPolicies(): Policy[] {
  const from = [{ targetRef: { kind: "MeshService", name: "web" }, default: { action: "Allow" } }];
  return [
    validPolicy({ type: "MeshTrafficPermission", name: "allow-web", spec: { targetRef: { kind: "MeshService", name: "backend" }, from } }),
    validPolicy({ type: "MeshTrafficPermission", name: "elsewhere", mesh: "other", spec: { targetRef: { kind: "Mesh" }, from } }),
    validPolicy({ type: "MeshTrafficPermission", name: "for-nobody", spec: { targetRef: { kind: "MeshService", name: "nobody" }, from } }),
    validPolicy({ type: "MeshTrafficPermission", name: "for-nobody-2", spec: { targetRef: { kind: "MeshService", name: "nobody-2" }, from } }),
  ];
}

test("given policies of another mesh and ones selecting no inbound, when compiled, then each is counted and only the selecting one is planned", (t) => {
  const dp = dataplaneFromTags("default", "kuma.io/service=backend").dataplane!;
  const snap = compile(backendPolicies(), dp, 1, { kumaVersion: "2.6" });
  t.is(snap.otherMesh, 1);
  t.is(snap.unselected, 2);
  t.deepEqual(snap.inbounds[0]!.from.MeshTrafficPermission!.policies.map((p) => p.name), ["allow-web"]);
});

test("given a snapshot, when the same policies are compiled again with it, then its plans are reused only for the same dataplane and version", (t) => {
  const dp = dataplaneFromTags("default", "kuma.io/service=backend").dataplane!;
  const first = compile(backendPolicies(), dp, 1, { kumaVersion: "2.6" });
  const plan = first.inbounds[0]!.from.MeshTrafficPermission;
  t.is(compile(backendPolicies(), dp, 2, { kumaVersion: "2.6", previous: first }).inbounds[0]!.from.MeshTrafficPermission, plan);
  t.not(compile(backendPolicies(), dp, 2, { kumaVersion: "2.7", previous: first }).inbounds[0]!.from.MeshTrafficPermission, plan);
  const sameTags = dataplaneFromTags("default", "kuma.io/service=backend").dataplane!;
  t.not(compile(backendPolicies(), sameTags, 2, { kumaVersion: "2.6", previous: first }).inbounds[0]!.from.MeshTrafficPermission, plan);
});
