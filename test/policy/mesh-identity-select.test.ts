// mesh identity select › which MeshIdentity a Dataplane gets (the matching one with the most labels, then the
// smallest name, only when Ready), how a resource reads its selector, status and provider, and which trust domains
// its MeshTrusts give.
import test from "ava";
import { dataplaneIdentity, matchingIdentities, meshIdentityFromSpec, meshTrustFromSpec, trustedDomains, type MeshIdentityResource } from "../../extproc/policy/documents/mesh-identity.js";
import type { Dataplane } from "../../extproc/policy/model/dataplane.js";

const DP: Dataplane = { mesh: "m", name: "dp", proxyType: "Sidecar", inbounds: [], labels: { app: "web", team: "shop", zone: "east" } };
const id = (name: string, matchLabels: Record<string, string> | undefined, extra: Partial<MeshIdentityResource> = {}): MeshIdentityResource => ({
  kind: "MeshIdentity",
  mesh: "m",
  name,
  ...(matchLabels ? { matchLabels } : {}),
  ready: true,
  ...extra,
});

test("mesh identity select › the matching identity with the most labels wins, then the smallest name", (t) => {
  // Given identities with 0, 1 and 2 matching labels, one of another mesh, one not matching, one without selector
  const all = [id("all", {}), id("by-app", { app: "web" }), id("b-two", { app: "web", team: "shop" }), id("a-two", { team: "shop", zone: "east" }), id("other", { app: "web", team: "shop", zone: "east" }, { mesh: "x" }), id("no", { app: "api" }), id("none", undefined)];
  // When the dataplane's identity is picked; then a-two (2 labels, smaller name than b-two)
  t.is(dataplaneIdentity(all, DP)?.name, "a-two");
  t.deepEqual(matchingIdentities(all, DP).map((i) => i.name), ["all", "by-app", "b-two", "a-two"]);
  // and in the other order of names the same
  t.is(dataplaneIdentity([id("z", { app: "web" }), id("y", { app: "web" })], DP)?.name, "y");
  t.is(dataplaneIdentity([id("y", { app: "web" }), id("z", { app: "web" })], DP)?.name, "y");
  // an identity with empty matchLabels selects every dataplane of its mesh, one with no selector none
  t.is(dataplaneIdentity([id("all", {})], { ...DP, labels: undefined })?.name, "all");
  t.is(dataplaneIdentity([id("none", undefined)], DP), undefined);
});

test("mesh identity select › a best match that is not Ready leaves the proxy without identity; no fallback", (t) => {
  // Given the best match not ready and a ready, less specific one; when picked; then none
  t.is(dataplaneIdentity([id("best", { app: "web", team: "shop" }, { ready: false }), id("less", { app: "web" })], DP), undefined);
  t.is(dataplaneIdentity([], DP), undefined);
});

test("mesh identity select › a resource's selector, readiness and provider as read from its spec and status", (t) => {
  // Given specs and statuses; when read; then
  t.deepEqual(meshIdentityFromSpec("m", "i", { selector: { dataplane: { matchLabels: { app: "web" } } }, provider: { type: "Bundled" } }, undefined), {
    kind: "MeshIdentity",
    mesh: "m",
    name: "i",
    matchLabels: { app: "web" },
    ready: true,
    provider: "Bundled",
  });
  t.deepEqual(meshIdentityFromSpec("m", "i", { selector: { dataplane: {} } }, { conditions: [] }), { kind: "MeshIdentity", mesh: "m", name: "i", matchLabels: {}, ready: false });
  t.false("matchLabels" in meshIdentityFromSpec("m", "i", { selector: {} }, undefined));
  t.false("matchLabels" in meshIdentityFromSpec("m", "i", {}, undefined));
  t.true(meshIdentityFromSpec("m", "i", {}, { conditions: [{ type: "Other", status: "False" }, { type: "Ready", status: "True" }] }).ready);
  t.false(meshIdentityFromSpec("m", "i", {}, { conditions: [{ type: "Ready", status: "False" }] }).ready);
  t.false(meshIdentityFromSpec("m", "i", {}, { conditions: ["Ready"] }).ready);
  t.true(meshIdentityFromSpec("m", "i", {}, { conditions: "Ready" }).ready, "conditions that are not a list count as no status");
  t.false("provider" in meshIdentityFromSpec("m", "i", { provider: { type: 1 } }, undefined));
});

test("mesh identity select › trust domains: the mesh's MeshTrusts, none without an identity, none for Spire", (t) => {
  // Given MeshTrusts of two meshes; when asked for the trusted domains of each kind of identity; then
  const trusts = [meshTrustFromSpec("m", "a", { trustDomain: "a.mesh" }), meshTrustFromSpec("m", "b", { trustDomain: "b.mesh" }), meshTrustFromSpec("x", "c", { trustDomain: "c.mesh" })];
  t.deepEqual([...(trustedDomains(trusts, id("i", {}), "m") ?? [])], ["a.mesh", "b.mesh"]);
  t.is(trustedDomains(trusts, undefined, "m"), undefined);
  t.is(trustedDomains(trusts, id("i", {}, { provider: "Spire" }), "m"), undefined);
  t.is(trustedDomains(trusts, id("i", {}), "y"), undefined);
  t.deepEqual(meshTrustFromSpec("m", "t", { trustDomain: "d" }), { kind: "MeshTrust", mesh: "m", name: "t", trustDomain: "d" });
});

test("mesh identity select › Ready means a condition of type Ready with status True; null conditions are skipped", (t) => {
  // Given statuses whose only True condition is of another type, or whose conditions hold null; when read; then not ready
  t.false(meshIdentityFromSpec("m", "i", {}, { conditions: [{ type: "Other", status: "True" }] }).ready);
  t.false(meshIdentityFromSpec("m", "i", {}, { conditions: [null] }).ready);
  // and a null before the Ready condition does not hide it
  t.true(meshIdentityFromSpec("m", "i", {}, { conditions: [null, { type: "Ready", status: "True" }] }).ready);
});

test("mesh identity select › identities tied on labels and name: the first listed is the one taken", (t) => {
  // Given two identities of the same name and as many labels, the first not ready; when picked; then none (the first)
  t.is(dataplaneIdentity([id("dup", { app: "web" }, { ready: false }), id("dup", { app: "web" })], DP), undefined);
  // and in the other order, the ready one
  t.is(dataplaneIdentity([id("dup", { app: "web" }), id("dup", { app: "web" }, { ready: false })], DP)?.ready, true);
});
