// select might › mightSelect, the per-policy filter of file-by-file sources: false for what cannot select the dataplane (other mesh, the version's rules), true for a route-targeting policy.
import test from "ava";
import type { Dataplane } from "../../extproc/policy/documents/dataplane.js";
import { validatePolicyObject } from "../../extproc/policy/documents/parse.js";
import type { KumaVersion } from "../../extproc/policy/model/kuma-version.js";
import type { Policy } from "../../extproc/policy/model/types.js";
import { mightSelect } from "../../extproc/policy/selection/select.js";

const dp: Dataplane = { mesh: "default", name: "dp", proxyType: "Sidecar", inbounds: [{ name: "8080", port: 8080, tags: { "kuma.io/service": "backend" } }] };

/** A validated policy: MTP on the whole mesh, or an MRL on a route by name. */
function policy(kind: "Mesh" | "MeshHTTPRoute", mesh: string, version: KumaVersion = "2.14"): Policy {
  const doc = kind === "Mesh"
    ? { type: "MeshTrafficPermission", mesh, name: "p", spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Allow" } }] } }
    : { type: "MeshRateLimit", mesh, name: "p", spec: { targetRef: { kind: "MeshHTTPRoute", name: "r" }, to: [{ targetRef: { kind: "Mesh" }, default: { local: { http: { requestRate: { num: 1, interval: "1s" } } } } }] } };
  const r = validatePolicyObject(doc, version);
  if (!r.policy) throw new Error(JSON.stringify(r.violations));
  return r.policy;
}

test("select might › given a policy of another mesh, when asked, then false, whatever its targetRef", (t) => {
  t.false(mightSelect(policy("Mesh", "other"), dp));
  t.false(mightSelect(policy("MeshHTTPRoute", "other"), dp));
});

test("select might › given a policy on a route of this mesh, when asked, then true (kept for the exact pass)", (t) => {
  t.true(mightSelect(policy("MeshHTTPRoute", "default"), dp));
  t.true(mightSelect(policy("Mesh", "default"), dp));
});

test("select might › given a dataplane whose only inbound is Ignored, when asked, then the version given decides", (t) => {
  // 2.14 selects ignored inbounds, 2.6 does not
  const ignored: Dataplane = { ...dp, inbounds: [{ ...dp.inbounds[0]!, ignored: true }] };
  t.false(mightSelect(policy("Mesh", "default", "2.6"), ignored, "2.6"));
  t.true(mightSelect(policy("Mesh", "default"), ignored, "2.14"));
});
