// The last-good rules and the fetched-set helpers as pure functions: which rejected document names what it replaces,
// what stays in force, fail-closed Meshes, item depth bounds, volatile fields, and a batch read twice.
import test from "ava";
import { failClosedMesh, FAIL_CLOSED_LABEL, identifies, isFailClosed, keepLastGoodBy, keptLastGoodFor, withFailClosedMeshes } from "../../extproc/policy-source/last-good.js";
import { mergeResources, nestsDeeperThan, stripVolatile, validateFetched, withoutTooDeepItems } from "../../extproc/policy-source/resource-set.js";
import { FetchedSet } from "../../extproc/policy-source/fetched-set.js";
import { ValidationMemo } from "../../extproc/policy-source/validation-memo.js";
import type { Resource } from "../../extproc/kuma-rest/resources.js";

/** A chain of objects whose deepest object sits at depth `depth` (the root is at 0). */
function chain(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = { leaf: "x" };
  for (let i = 0; i < depth; i++) v = { next: v };
  return v;
}

const mtp = (name: string, action = "Allow"): Resource =>
  ({
    type: "MeshTrafficPermission",
    mesh: "default",
    name,
    spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action } }] },
  }) as unknown as Resource;

test("identifies › only a document with a name and an exact kind names what it would replace", (t) => {
  const cases: Array<[string, { kind?: string; name?: string }, boolean]> = [
    ["policy kind and name", { kind: "MeshTrafficPermission", name: "a" }, true],
    ["resource kind and name", { kind: "Mesh", name: "default" }, true],
    ["identity resource kind", { kind: "MeshTrust", name: "t" }, true],
    ["no name", { kind: "MeshTrafficPermission" }, false],
    ["no kind", { name: "a" }, false],
    ["mis-cased kind", { kind: "meshtrafficpermission", name: "a" }, false],
    ["unknown kind", { kind: "MeshTimeout", name: "a" }, false],
    ["nothing", {}, false],
  ];
  for (const [what, r, want] of cases) t.is(identifies(r), want, what);
});

test("keepLastGoodBy › nothing rejected or nothing previous: exactly the accepted set", (t) => {
  const key = (s: string) => s;
  // given accepted items and previous ones it does not list
  const accepted = ["MeshTrafficPermission/a"];
  // when nothing was rejected, then the previous ones are dropped
  t.deepEqual(keepLastGoodBy(accepted, [], ["MeshTrafficPermission/old"], key), accepted);
  t.is(keepLastGoodBy(accepted, [], ["MeshTrafficPermission/old"], key), accepted, "the accepted list itself: a clean read copies nothing");
  // when something was rejected but there was no previous set, then the accepted set is all there is
  t.deepEqual(keepLastGoodBy(accepted, [{ kind: "MeshTrafficPermission", name: "b" }], undefined, key), accepted);
});

test("keepLastGoodBy › one unidentified rejection among identified ones keeps every previous entry not replaced", (t) => {
  const key = (s: string) => s;
  const previous = ["MeshTrafficPermission/a", "MeshTrafficPermission/b", "MeshTrafficPermission/c"];
  // given a rejected b (identified) and a rejected document with no name
  const rejected = [{ kind: "MeshTrafficPermission", name: "b" }, { kind: "MeshTrafficPermission" }];
  // when a is accepted again
  const out = keepLastGoodBy(["MeshTrafficPermission/a"], rejected, previous, key);
  // then b and c both stay: the anonymous one could have been c
  t.deepEqual(out, ["MeshTrafficPermission/a", "MeshTrafficPermission/b", "MeshTrafficPermission/c"]);
  // and with only the identified rejection, only b stays
  t.deepEqual(keepLastGoodBy(["MeshTrafficPermission/a"], rejected.slice(0, 1), previous, key), ["MeshTrafficPermission/a", "MeshTrafficPermission/b"]);
});

test("keptLastGoodFor › whether a rejected document still has a version in force", (t) => {
  const inForce = new Set(["MeshTrafficPermission/a", "Mesh/default"]);
  const cases: Array<[string, { kind?: string; name?: string }, ReadonlySet<string>, boolean]> = [
    ["exact key in force", { kind: "MeshTrafficPermission", name: "a" }, inForce, true],
    ["exact key not in force", { kind: "MeshTrafficPermission", name: "z" }, inForce, false],
    ["mis-cased kind matches regardless of case", { kind: "meshtrafficpermission", name: "a" }, inForce, true],
    ["mis-cased kind, other name", { kind: "meshtrafficpermission", name: "z" }, inForce, false],
    ["unknown kind, nothing like it", { kind: "MeshTimeout", name: "a" }, inForce, false],
    ["no name, something in force", { kind: "MeshTrafficPermission" }, inForce, true],
    ["no kind, something in force", { name: "a" }, inForce, true],
    ["no name, nothing in force", { kind: "MeshTrafficPermission" }, new Set(), false],
    ["no kind, nothing in force", { name: "a" }, new Set(), false],
    ["mis-cased, nothing in force", { kind: "mesh", name: "default" }, new Set(), false],
    ["an exact kind matches its exact key only", { kind: "MeshTrafficPermission", name: "a" }, new Set(["meshtrafficpermission/a"]), false],
  ];
  for (const [what, r, set, want] of cases) t.is(keptLastGoodFor(r, set), want, what);
});

test("failClosedMesh › a stand-in Mesh with mTLS on, labelled so inspect can show it", (t) => {
  const m = failClosedMesh("default");
  t.deepEqual(m, { kind: "Mesh", name: "default", labels: { "meshext.io/fail-closed": "true" }, mtlsEnabled: true });
  t.is(FAIL_CLOSED_LABEL, "meshext.io/fail-closed");
  t.true(isFailClosed(m));
  const cases: Array<[string, object, boolean]> = [
    ["no labels", { kind: "Mesh", name: "default" }, false],
    ["other label", { labels: { other: "true" } }, false],
    ["label not true", { labels: { "meshext.io/fail-closed": "false" } }, false],
    ["label empty", { labels: { "meshext.io/fail-closed": "" } }, false],
  ];
  for (const [what, r, want] of cases) t.is(isFailClosed(r), want, what);
});

test("withFailClosedMeshes › a rejected Mesh without a version in the set gets a fail-closed stand-in", (t) => {
  const good = { kind: "Mesh", name: "default", labels: {}, mtlsEnabled: false };
  const service = { kind: "MeshService", name: "other" };
  // given the good Mesh default and a service named like the rejected Mesh
  const resources = [good, service];
  // when Mesh default and Mesh other are rejected, and a policy and a nameless Mesh too
  const out = withFailClosedMeshes(resources, [{ kind: "Mesh", name: "default" }, { kind: "Mesh", name: "other" }, { kind: "MeshTrafficPermission", name: "x" }, { kind: "Mesh" }]);
  // then default keeps its version, other gets a stand-in (the MeshService is no Mesh), nothing else is added
  t.deepEqual(out, [good, service, failClosedMesh("other")]);
  // and the input is left as it was
  t.is(resources.length, 2);
  // a rejected Mesh rejected twice gets one stand-in
  t.deepEqual(withFailClosedMeshes([], [{ kind: "Mesh", name: "m" }, { kind: "Mesh", name: "m" }]), [failClosedMesh("m")]);
});

test("nestsDeeperThan › an object at depth maxDepth or deeper is too deep; scalars never are", (t) => {
  const cases: Array<[string, unknown, number, boolean]> = [
    ["deepest at the bound", chain(3), 3, true],
    ["deepest one above the bound", chain(2), 3, false],
    ["default bound 64: depth 64", chain(64), 64, true],
    ["default bound 64: depth 63", chain(63), 64, false],
    ["a string at the root, bound 0", "x", 0, false],
    ["a number at the root, bound 0", 5, 0, false],
    ["null at the root", null, 0, false],
    ["an object at the root, bound 0", {}, 0, true],
    ["arrays nest too", [[[1]]], 2, true],
  ];
  for (const [what, v, max, want] of cases) t.is(nestsDeeperThan(v, max), want, what);
  t.true(nestsDeeperThan(chain(64)), "default bound is 64");
  t.false(nestsDeeperThan(chain(63)), "default bound is 64");
});

test("withoutTooDeepItems › a too-deep item is rejected with its kind and name, the others kept", (t) => {
  // given a shallow policy, a too-deep named policy and a too-deep item with no type or name
  const ok = mtp("ok");
  const deep = { type: "MeshTrafficPermission", name: "deep", spec: chain(70) } as unknown as Resource;
  const anonymous = { spec: chain(70) } as unknown as Resource;
  // when split by the default depth bound
  const out = withoutTooDeepItems([ok, deep, anonymous]);
  // then
  t.deepEqual(out.items, [ok]);
  t.deepEqual(out.rejected, [
    { kind: "MeshTrafficPermission", name: "deep", violations: [{ field: "document", message: "nests deeper than 64 levels" }] },
    { violations: [{ field: "document", message: "nests deeper than 64 levels" }] },
  ]);
  // and with nothing too deep, nothing rejected
  t.deepEqual(withoutTooDeepItems([ok]), { items: [ok], rejected: [] });
});

test("stripVolatile › timestamps are left out; whether the resource was stored stays", (t) => {
  t.deepEqual(stripVolatile({ type: "Mesh", name: "m", creationTime: "t1", modificationTime: "t2" } as unknown as Resource), { type: "Mesh", name: "m", stored: true });
  t.deepEqual(stripVolatile({ type: "Mesh", name: "m" } as unknown as Resource), { type: "Mesh", name: "m" });
  t.deepEqual(stripVolatile({ type: "Mesh", name: "m", modificationTime: "t2" } as unknown as Resource), { type: "Mesh", name: "m" });
  t.is(stripVolatile(null as unknown as Resource), null);
  t.is(stripVolatile("text" as unknown as Resource), "text");
});

test("mergeResources › missing identity and trust lists merge to empty lists", (t) => {
  const none = { meshes: [], services: [] } as unknown as Parameters<typeof mergeResources>[0];
  t.deepEqual(mergeResources(none, none), { meshes: [], services: [], identities: [], trusts: [] });
});

test("validateFetched › other meshes are dropped, odd items rejected with what they name, sources set", (t) => {
  // given this mesh's stored Mesh, another mesh's, a policy, a null item and an item with non-string type and name
  const items = [
    { type: "Mesh", name: "default", creationTime: "t" },
    { type: "Mesh", name: "other", creationTime: "t" },
    mtp("p"),
    null,
    { type: 5, name: 7 },
  ] as unknown as Resource[];
  // when validated for mesh default with a source for each policy
  const set = validateFetched(items, "default", undefined, (item) => `cp:${item.name}`);
  // then only this mesh's Mesh is read
  t.deepEqual(set.resources.meshes.map((m) => m.name), ["default"]);
  t.deepEqual(set.good.map((g) => g.name), ["default", "p"]);
  // and the policy carries its source
  t.is(set.policies.length, 1);
  t.is(set.policies[0]!.source, "cp:p");
  // and the odd items are rejected without a kind or name they do not have
  t.is(set.rejected.length, 2);
  for (const r of set.rejected) {
    t.false("kind" in r, JSON.stringify(r));
    t.false("name" in r, JSON.stringify(r));
    t.true(r.violations.length > 0);
  }
});

test("FetchedSet › the same batch twice gives nothing new, unless forgotten; a null item is rejected", (t) => {
  const fetched = new FetchedSet("default");
  const sourceOf = (item: Resource) => `cp:${item.name}`;
  // given a batch with a policy and a null item, applied
  const batch = [mtp("a"), null] as unknown as Resource[];
  const first = fetched.next(batch, undefined, sourceOf);
  t.truthy(first);
  t.deepEqual(first!.policies.map((p) => p.name), ["a"]);
  t.is(first!.refused.length, 1);
  fetched.accept(first!);
  // when the same batch (fresh objects, same content) comes again, then there is nothing to apply
  t.is(fetched.next([mtp("a"), null] as unknown as Resource[], undefined, sourceOf), undefined);
  t.is(fetched.next(batch, undefined, sourceOf), undefined);
  // when the fingerprint is forgotten, then the same batch is applied again
  fetched.forget();
  const again = fetched.next(batch, undefined, sourceOf);
  t.truthy(again);
  t.deepEqual(again!.policies.map((p) => p.name), ["a"]);
});

test("validateFetched › a policy the memo knows from a round without sources gets its source now", async (t) => {
  const memo = new ValidationMemo();
  const p = mtp("p");
  const texts = [JSON.stringify(p)];
  // given a round that validated the policy without a source
  t.is(validateFetched([p], "default", undefined, undefined, { texts, memo }).policies[0]!.source, undefined);
  // when the next round, answered from the memo, has a source for each policy
  const set = validateFetched([p], "default", undefined, (item) => `cp:${item.name}`, { texts, memo });
  // then the policy carries it
  t.is(set.policies[0]!.source, "cp:p");
});

test("validateFetched › a policy the memo knows with its source already is not given one again", (t) => {
  const memo = new ValidationMemo();
  const p = mtp("p");
  const texts = [JSON.stringify(p)];
  // given a round that validated the policy with a source
  const asked: string[] = [];
  const sourceOf = (item: Resource) => (asked.push(item.name), `cp:${item.name}`);
  validateFetched([p], "default", undefined, sourceOf, { texts, memo });
  t.deepEqual(asked, ["p"]);
  // when the next round is answered from the memo
  const set = validateFetched([p], "default", undefined, sourceOf, { texts, memo });
  // then the policy keeps its source, and sourceOf is not asked again
  t.is(set.policies[0]!.source, "cp:p");
  t.deepEqual(asked, ["p"]);
});
