// inspect rules wire › Kuma's `_rules` answer (inspectRules): legacy from rules under the asked Kuma version, the engine view's warnings, and which route matches httpMatches lists.
import test from "ava";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import { resourcesOf } from "../../extproc/policy/documents/resources.js";
import type { Dataplane } from "../../extproc/policy/model/dataplane.js";
import type { KumaVersion } from "../../extproc/policy/model/kuma-version.js";
import { dataplaneRules } from "../../extproc/policy/views/inspect.js";
import { inspectRules, matchesHash } from "../../extproc/policy/views/inspect-rules.js";

const DP: Dataplane = { mesh: "default", name: "dp-1", proxyType: "Sidecar", labels: {}, inbounds: [{ name: "http", declaredName: "http", port: 8080, tags: { "kuma.io/service": "backend" } }] };

function parsed(text: string, kumaVersion: KumaVersion) {
  const p = parsePolicyText(text, undefined, { kumaVersion });
  if (p.rejected.length > 0) throw new Error(JSON.stringify(p.rejected));
  return { policies: p.policies, resources: resourcesOf(p.resources) };
}

// From subsets Kuma 2.6 and 2.14 group differently (kumahq/kuma #12340), under a Mesh with mTLS off.
const SUBSETS = `
type: Mesh
name: default
mtls: {backends: [{name: ca-1, type: builtin}]}
---
type: MeshTrafficPermission
name: subsets
spec: {targetRef: {kind: Mesh}, from: [{targetRef: {kind: MeshSubset, tags: {k: "1", j: "1"}}, default: {action: Allow}}, {targetRef: {kind: MeshSubset, tags: {m: "1", j: "2"}}, default: {action: Deny}}]}
`;

test("inspect rules wire › from rules follow the asked Kuma version, and the engine view's mTLS warning is kept", (t) => {
  const subsetsOf = (version: KumaVersion) => {
    // given the subsets; when the _rules answer is computed for the version
    const { policies, resources } = parsed(SUBSETS, version);
    const answer = inspectRules(policies, DP, { kumaVersion: version, resources });
    const mtp = answer.rules.find((r) => r.type === "MeshTrafficPermission")!;
    // then the warning is there, and the from rules are those of the engine's view for that version
    t.deepEqual(mtp.warnings, ["Mesh is not Mtls enabled this policy will have no effect"], version);
    const view = dataplaneRules(policies, DP, { kumaVersion: version, resources }).rules[0]!.fromRules[0]!.rules;
    t.deepEqual(mtp.fromRules![0]!.rules.map((r) => r.matchers), view.map((r) => r.matchers), version);
    return mtp.fromRules![0]!.rules.length;
  };
  // and 2.6's list is not 2.14's
  t.not(subsetsOf("2.6"), subsetsOf("2.14"));
});

test("inspect rules wire › httpMatches takes a route's legacy to kinds only: a MeshExternalService rule no resource shows is left out", (t) => {
  // given a route with a rule to a MeshService by name and one to a MeshExternalService, and no service resources
  const { policies } = parsed(`
type: MeshHTTPRoute
name: r
spec: {targetRef: {kind: Mesh}, to: [{targetRef: {kind: MeshService, name: orders}, rules: [{matches: [{path: {type: PathPrefix, value: /o}}], default: {}}]}, {targetRef: {kind: MeshExternalService, name: ext}, rules: [{matches: [{path: {type: PathPrefix, value: /e}}], default: {}}]}]}
`, "2.14");
  // when the _rules answer is computed
  const answer = inspectRules(policies, DP, { kumaVersion: "2.14" });
  // then only the MeshService rule's match is listed
  const match = [{ path: { type: "PathPrefix", value: "/o" } }];
  t.deepEqual(answer.httpMatches, [{ hash: matchesHash(match as never), match }]);
});
