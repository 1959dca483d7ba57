// explain report › what explainRequest reports for an inbound or outbound request (selection, client, inbound, proxy mTLS, policies, regions, rules), in process.
import test from "ava";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import { resourcesOf } from "../../extproc/policy/documents/resources.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import type { Dataplane } from "../../extproc/policy/model/dataplane.js";
import type { KumaVersion } from "../../extproc/policy/model/kuma-version.js";
import { dataplaneRules } from "../../extproc/policy/views/inspect.js";
import { explainRequest, parseExplainInput, type ExplainReport } from "../../extproc/policy/views/explain.js";

const ORDERS: Dataplane = { mesh: "default", name: "orders-1", proxyType: "Sidecar", labels: { app: "orders" }, inbounds: [{ name: "http", declaredName: "http", port: 8080, tags: { "kuma.io/service": "orders" } }] };

function engineWith(text: string, kumaVersion: KumaVersion = "2.14", dp: Dataplane = ORDERS): PolicyEngine {
  const parsed = parsePolicyText(text, undefined, { kumaVersion });
  if (parsed.rejected.length > 0) throw new Error(JSON.stringify(parsed.rejected));
  const engine = new PolicyEngine({ dataplane: dp, nowMs: () => 0, kumaVersion });
  engine.replace(parsed.policies, resourcesOf(parsed.resources));
  return engine;
}

function explain(engine: PolicyEngine, body: unknown): ExplainReport {
  const { input, violations } = parseExplainInput(body);
  if (!input) throw new Error(JSON.stringify(violations));
  return explainRequest(engine, input);
}

const CA = `caBundles: [{type: Pem, pem: {value: "-----BEGIN CERTIFICATE-----\\nMIIBszCCAVmgAwIBAgIRAOZ0\\n-----END CERTIFICATE-----\\n"}}]`;
const WEB = "spiffe://default.zone-1.mesh.local/workload/web";

const IDENTITY_SET = `
type: Mesh
name: default
---
type: MeshIdentity
mesh: default
name: identity
spec:
  selector: {dataplane: {matchLabels: {app: orders}}}
  spiffeID: {trustDomain: "{{ .Mesh }}.zone-1.mesh.local", path: "/workload/{{ label \\"app\\" }}"}
  provider: {type: Bundled, bundled: {autogenerate: {enabled: true}}}
---
type: MeshTrust
mesh: default
name: zone-2
spec: {trustDomain: default.zone-2.mesh.local, ${CA}}
---
type: MeshTrust
mesh: default
name: zone-1
spec: {trustDomain: default.zone-1.mesh.local, ${CA}}
---
type: MeshTrafficPermission
name: allow-web
labels: {kuma.io/origin: zone}
spec: {targetRef: {kind: Dataplane, labels: {app: orders}}, rules: [{default: {allow: [{spiffeID: {type: Prefix, value: "${WEB}"}}]}}]}
---
type: MeshTrafficPermission
name: old-from
spec: {targetRef: {kind: Mesh}, from: [{targetRef: {kind: Mesh}, default: {action: Deny}}]}
---
type: MeshRateLimit
name: slow
spec: {targetRef: {kind: Mesh, proxyTypes: [Sidecar]}, from: [{targetRef: {kind: Mesh}, default: {local: {http: {requestRate: {num: 5, interval: 1s}}}}}]}
---
type: MeshFaultInjection
name: faults
spec: {targetRef: {kind: Mesh, proxyTypes: [Sidecar]}, rules: [{matches: [{spiffeID: {type: Prefix, value: "${WEB}"}}], default: {http: [{delay: {value: 1ms, percentage: 0}}]}}]}
`;

test("explain report › an inbound request under a MeshIdentity: selection, client, inbound, proxy, every policy with its part, regions and the rules that applied", (t) => {
  // given a MeshIdentity, two MeshTrusts (zone-2 listed first), an MTP with rules (zone origin) beside a from-based one, a from MeshRateLimit and a MeshFaultInjection rule
  const engine = engineWith(IDENTITY_SET);
  // when a request from web's certificate is explained
  const report = explain(engine, { client: { uriSans: [WEB] } });
  // then the whole report
  const rate = { local: { http: { requestRate: { num: 5, interval: "1s" } } } };
  const sidecars = { kind: "Mesh", proxyTypes: ["Sidecar"] };
  t.deepEqual(report as unknown, {
    decision: report.decision,
    selection: { kept: 4, total: 4 },
    direction: "inbound",
    policies: [
      { kind: "MeshTrafficPermission", name: "allow-web", origin: "zone", targetRef: { kind: "Dataplane", labels: { app: "orders" } }, contributed: true },
      { kind: "MeshTrafficPermission", name: "old-from", targetRef: { kind: "Mesh" }, contributed: false, ignored: "from-based policy on an inbound with rules" },
      { kind: "MeshFaultInjection", name: "faults", targetRef: sidecars, contributed: true },
      { kind: "MeshRateLimit", name: "slow", targetRef: sidecars, contributed: true },
    ],
    merged: { MeshRateLimit: rate },
    client: { source: "peer-cert", tags: {}, ignored: [WEB] },
    inbound: { name: "http", tags: { "kuma.io/service": "orders" } },
    proxy: { mtls: "on", identity: "identity", trustDomains: ["default.zone-1.mesh.local", "default.zone-2.mesh.local"] },
    regions: { MeshRateLimit: [{ subset: [], conf: rate, from: ["slow from[0]"] }] },
    matchedRules: {
      MeshTrafficPermission: [{ policy: "allow-web", rule: "rules[0]", match: null, conf: { allow: [{ spiffeID: { type: "Prefix", value: WEB } }] } }],
      MeshFaultInjection: [{ policy: "faults", rule: "rules[0]", match: { spiffeID: { type: "Prefix", value: WEB } }, conf: { http: [{ delay: { value: "1ms", percentage: 0 } }] } }],
    },
  });
  t.is(report.decision.explain.policy, "allow-web");
});

test("explain report › a client given as a list of SPIFFE IDs is one described identity", (t) => {
  // given a body whose spiffeID is a list; when parsed; then no violation, and a described identity that names both
  const other = "spiffe://default.zone-1.mesh.local/workload/other";
  const { input, violations } = parseExplainInput({ client: { spiffeID: [WEB, other] } });
  t.deepEqual(violations, []);
  t.is(input?.identity?.source, "described");
  t.is(input?.identity?.spiffe, `${WEB},${other}`);
});

test("explain report › before the first policy set: the not-ready decision and nothing else", (t) => {
  // given an engine that never got a policy set
  const engine = new PolicyEngine({ dataplane: ORDERS, nowMs: () => 0, beforeFirstSync: "allow" });
  for (const direction of ["inbound", "outbound"]) {
    // when a request is explained, with rules
    const report = explain(engine, { direction, rules: true });
    // then only the decision, with no selection, client, inbound, proxy or rules
    t.deepEqual(report as unknown, { decision: report.decision, direction, policies: [], merged: {}, regions: {} }, direction);
    t.is(report.decision.explain.action, "not-ready");
  }
});

test("explain report › a dataplane without inbounds: the client and proxy, no inbound", (t) => {
  // given a policy set on a dataplane with no inbound
  const engine = engineWith("type: Mesh\nname: default\n", "2.14", { ...ORDERS, inbounds: [] });
  // when a request is explained
  const report = explain(engine, { client: { tags: { "kuma.io/service": "web" } } });
  // then the client and proxy (a Mesh without mTLS: off) are shown, with no inbound
  t.deepEqual(report as unknown, { decision: report.decision, selection: { kept: 0, total: 0 }, direction: "inbound", policies: [], merged: {}, client: { source: "described", tags: { "kuma.io/service": ["web"] }, ignored: [] }, proxy: { mtls: "off" }, regions: {} });
});

test("explain report › mTLS on without any MeshTrafficPermission: denied, with no policy listed", (t) => {
  // given a Mesh with mTLS enabled and no policy
  const engine = engineWith("type: Mesh\nname: default\nmtls: {enabledBackend: ca-1, backends: [{name: ca-1, type: builtin}]}\n");
  // when a request is explained
  const report = explain(engine, { client: { tags: { "kuma.io/service": "web" } } });
  // then it is denied and the report lists no policy, region or merged conf
  t.is(report.decision.explain.action, "deny");
  t.deepEqual([report.policies, report.regions, report.merged, report.proxy], [[], {}, {}, { mtls: "on" }]);
});

const MTLS_OFF_FROM = `
type: Mesh
name: default
mtls: {backends: [{name: ca-1, type: builtin}]}
---
type: MeshTrafficPermission
name: subsets
spec: {targetRef: {kind: Mesh}, from: [{targetRef: {kind: MeshSubset, tags: {k: "1", j: "1"}}, default: {action: Allow}}, {targetRef: {kind: MeshSubset, tags: {m: "1", j: "2"}}, default: {action: Deny}}]}
`;

test("explain report › rules: true lists the from rules under the engine's Kuma version and the _rules view with its Mesh resource", (t) => {
  for (const version of ["2.6", "2.14"] as const) {
    // given from subsets Kuma 2.6 and 2.14 group differently, and a Mesh with mTLS off
    const engine = engineWith(MTLS_OFF_FROM, version);
    const snap = engine.current()!;
    // when explained with rules: true
    const report = explain(engine, { client: { tags: { k: "1", j: "1" } }, rules: true });
    // then the from rules are the engine version's, and the _rules view is the inspect view of the set with its version and Mesh (mTLS off: the MTP warning)
    const view = dataplaneRules(snap.policies, ORDERS, { kumaVersion: version, resources: snap.resources });
    t.deepEqual(report.dataplaneRules, view, version);
    t.deepEqual(report.dataplaneRules?.rules.map((r) => r.warnings), [["Mesh is not Mtls enabled this policy will have no effect"]], version);
    const fromRules = view.rules[0]!.fromRules[0]!.rules.map((r) => r.matchers.map((m) => `${m.not ? "!" : ""}${m.key}=${m.value}`).join(","));
    t.deepEqual(report.rules?.MeshTrafficPermission?.map((r) => r.subset.map((m) => `${m.not ? "!" : ""}${m.key}=${m.value}`).join(",")), fromRules, version);
  }
  // and the two versions' rule lists differ
  const subsets = (version: KumaVersion) => explain(engineWith(MTLS_OFF_FROM, version), { rules: true }).rules?.MeshTrafficPermission?.length;
  t.not(subsets("2.6"), subsets("2.14"));
  // and without rules: true neither list is shown
  const plain = explain(engineWith(MTLS_OFF_FROM), {});
  t.false("rules" in plain);
  t.false("dataplaneRules" in plain);
});

test("explain report › an outbound route's filters that ext_proc cannot apply are listed as not applied", (t) => {
  // given a route to orders that mirrors requests
  const engine = engineWith(`
type: MeshHTTPRoute
name: mirror
spec: {targetRef: {kind: Mesh}, to: [{targetRef: {kind: MeshService, name: orders}, rules: [{matches: [{path: {type: PathPrefix, value: /}}], default: {filters: [{type: RequestMirror, requestMirror: {backendRef: {kind: MeshService, name: shadow}}}]}}]}]}
`, "2.14", { ...ORDERS, inbounds: [{ name: "http", port: 8080, tags: { "kuma.io/service": "web" } }] });
  // when a request to orders is explained
  const report = explain(engine, { direction: "outbound", authority: "orders", path: "/" });
  // then the mirror is reported as not applied, and the route as contributing
  t.deepEqual(report.notApplied, ["RequestMirror"]);
  t.deepEqual(report.policies.map((p) => `${p.name}/${p.contributed}`), ["mirror/true"]);
});
