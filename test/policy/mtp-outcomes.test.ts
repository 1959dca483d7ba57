// mtp outcomes › decideMtp's outcome and reason in each mesh state (MeshTrust trust domains, mTLS off, MeshIdentity, Kuma 3.0) and on the 2.12–2.13 per-rule path.
import test from "ava";
import { dataplaneFromObject } from "../../extproc/policy/documents/dataplane.js";
import { compile, type InboundPlan } from "../../extproc/policy/plans/compile.js";
import { decideMtp, trustDomainOf, type MtpEnv } from "../../extproc/policy/decide/mtp.js";
import { describedIdentity } from "../../extproc/policy/decide/identity.js";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import { versionTraits, type KumaVersion } from "../../extproc/policy/model/kuma-version.js";

const TD = "spiffe://default.z1.mesh.local";
const WEB = `${TD}/ns/shop/sa/web`;
const BATCH = `${TD}/ns/shop/sa/batch`;

/** Inbound http's plan under `yaml` (every document must be valid), compiled with `version`'s semantics. */
function planOf(yaml: string, version: KumaVersion = "2.14"): InboundPlan {
  const parsed = parsePolicyText(yaml, "mtp.yaml", { kumaVersion: version });
  if (parsed.rejected.length > 0) throw new Error(JSON.stringify(parsed.rejected));
  const dp = dataplaneFromObject({ type: "Dataplane", mesh: "default", name: "dp", networking: { inbound: [{ name: "http", port: 8080, tags: { "kuma.io/service": "orders" } }] } }).dataplane!;
  return compile(parsed.policies, dp, 1, { kumaVersion: version }).inbounds[0]!;
}
const env = (over: Partial<MtpEnv> = {}, version: KumaVersion = "2.14"): MtpEnv => ({ traits: versionTraits(version), ...over });
const client = (spiffe = WEB) => describedIdentity([spiffe], "default");
const who = () => "the client";

const FROM_ALLOW = `type: MeshTrafficPermission
name: from-allow
mesh: default
spec:
  targetRef: {kind: Mesh}
  from:
    - targetRef: {kind: Mesh}
      default: {action: Allow}
`;
const FROM_DENY = FROM_ALLOW.replace("Allow", "Deny").replace("from-allow", "from-deny");
const RULES_BATCH_ONLY = `type: MeshTrafficPermission
name: batch-only
mesh: default
spec:
  rules:
    - default:
        allow: [{spiffeID: {type: Exact, value: "${BATCH}"}}]
`;

test("mtp outcomes › the trust domain is that of the first spiffe:// ID, and only of a spiffe:// one", (t) => {
  t.is(trustDomainOf(`${WEB},spiffe://other/x`), "default.z1.mesh.local");
  t.is(trustDomainOf("kuma://version/v1"), undefined);
  t.is(trustDomainOf("urn:spiffe://evil/x"), undefined);
});

test("mtp outcomes › a peer of a trust domain no MeshTrust gives is denied, the trusted ones listed sorted", (t) => {
  // given MeshTrusts for zeta and alpha; when a peer of evil calls
  const mtp = decideMtp(planOf(FROM_ALLOW), client("spiffe://evil/ns/x/sa/y"), who, env({ mtls: true, trustDomains: new Set(["zeta", "alpha"]) }));
  // then the handshake refuses it before any MTP
  t.deepEqual(mtp, {
    explain: { action: "deny", kind: "none", reason: "the client: trust domain evil is not one of the MeshTrusts' (alpha, zeta): Kuma's TLS handshake refuses the peer before MeshTrafficPermission" },
    denied: true,
    outcome: "deny (untrusted trust domain)",
  });
});

test("mtp outcomes › Kuma 3.0 without a MeshIdentity: rules MTPs do not apply", (t) => {
  const mtp = decideMtp(planOf(RULES_BATCH_ONLY, "3.0"), client(), who, env({}, "3.0"));
  t.like(mtp, { denied: false, outcome: "not applied (no MeshIdentity)", explain: { action: "allow" } });
});

test("mtp outcomes › mesh mTLS off: a from-based MTP does not apply", (t) => {
  const mtp = decideMtp(planOf(FROM_DENY), client(), who, env({ mtls: false }));
  t.like(mtp, { denied: false, outcome: "not applied (mTLS off)", explain: { action: "allow", reason: "mesh mTLS is off: MeshTrafficPermission does not apply on inbound http" } });
});

test("mtp outcomes › a MeshIdentity and no MTP rules: deny all", (t) => {
  const mtp = decideMtp(planOf(FROM_ALLOW), client(), who, env({ identity: "workload" }));
  t.like(mtp, { denied: true, outcome: "deny (MeshIdentity without MTP rules)" });
});

test("mtp outcomes › mesh mTLS on and no MTP: deny all", (t) => {
  const mtp = decideMtp(planOf(""), client(), who, env({ mtls: true }));
  t.like(mtp, { denied: true, outcome: "deny (no MeshTrafficPermission under mTLS)", explain: { reason: "the client: mesh mTLS is on and no MeshTrafficPermission selects inbound http (deny all)" } });
});

test("mtp outcomes › rules that allow only another client: default deny", (t) => {
  const mtp = decideMtp(planOf(RULES_BATCH_ONLY), client(WEB), who, env({ mtls: true }));
  t.like(mtp, { denied: true, outcome: "deny (default)" });
});

test("mtp outcomes › a from-based Deny: the outcome is deny", (t) => {
  const mtp = decideMtp(planOf(FROM_DENY), client(), who, env({ mtls: true }));
  t.like(mtp, { denied: true, outcome: "deny", explain: { policy: "from-deny", rule: "from[0]" } });
});

test("mtp outcomes › 2.12 per-rule: a first rule that does not match the client leaves the decision to the next", (t) => {
  // given a rule allowing namespace other only, then a rule allowing web with a shadow deny
  const plan = planOf(
    `type: MeshTrafficPermission
name: two-rules
mesh: default
spec:
  rules:
    - default:
        allow: [{spiffeID: {type: Prefix, value: "${TD}/ns/other"}}]
    - default:
        allowWithShadowDeny: [{spiffeID: {type: Exact, value: "${WEB}"}}]
`,
    "2.12",
  );
  // when web calls under 2.12's first-match semantics; then the second rule's shadow deny decides
  const mtp = decideMtp(plan, client(WEB), who, env({ mtls: true }, "2.12"));
  t.like(mtp, { denied: false, outcome: "shadow-deny", explain: { action: "shadow-deny", rule: "rules[1].default.allowWithShadowDeny[0]" } });
});
