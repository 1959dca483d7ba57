// inspect views › Kuma's KRI parsing, outbound KRI resolution, `_inbounds/{kri}/_policies` section lookup, and the `_rules` httpMatches, called in-process with small policy sets.
import test from "ava";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import { dataplaneFromTags } from "../../extproc/policy/documents/dataplane.js";
import type { Dataplane } from "../../extproc/policy/model/dataplane.js";
import type { ServiceResource } from "../../extproc/policy/documents/resources.js";
import type { OutboundPlan } from "../../extproc/policy/plans/compile.js";
import { inboundPolicies, outboundDestination, parseKri, type Kri } from "../../extproc/policy/views/inspect-policies.js";
import { inspectRules, matchesHash, withDefaultWeights } from "../../extproc/policy/views/inspect-rules.js";

test("inspect views › parseKri accepts every resource short name Kuma's inspect paths use", (t) => {
  // given KRIs of the service kinds, a policy kind, a dataplane and a mesh; when parsed; then each names its parts
  for (const short of ["msvc", "extsvc", "mzsvc", "mtp", "dp", "mesh"]) {
    t.deepEqual(parseKri(`kri_${short}_default_zone-1_ns_name_http`), { shortName: short, mesh: "default", zone: "zone-1", namespace: "ns", name: "name", sectionName: "http" }, short);
  }
});

test("inspect views › parseKri words Kuma's errors for malformed identifiers", (t) => {
  const cases: Array<[string, string]> = [
    ["kri_msvc_default", `invalid identifier string: "kri_msvc_default"`],
    ["kr_msvc_default_z_ns_name_", `identifier must start with 'kri': "kr_msvc_default_z_ns_name_"`],
    ["kri_nope_default_z_ns_name_", `unknown short name of resource type: "nope"`],
    ["kri__default_z_ns_name_", `unknown short name of resource type: ""`],
  ];
  for (const [text, error] of cases) t.deepEqual(parseKri(text), { error }, text);
});

function service(over: Partial<ServiceResource> & Pick<ServiceResource, "kind" | "name">): ServiceResource {
  return { mesh: "default", displayName: over.name, labels: {}, ports: [{ port: 80, name: "http" }], hosts: [], spec: {}, ...over };
}

function planWith(services: ServiceResource[]): OutboundPlan {
  return { resources: { services } } as unknown as OutboundPlan;
}

function kri(text: string): Kri {
  return parseKri(text) as Kri;
}

test("inspect views › outboundDestination resolves a KRI to the service port it names", (t) => {
  // given services of each kind, in two meshes and namespaces, with one or two ports
  const plan = planWith([
    service({ kind: "MeshService", name: "orders.other", displayName: "orders", namespace: "other", mesh: "default" }),
    service({ kind: "MeshService", name: "orders.shop", displayName: "orders", namespace: "shop", ports: [{ port: 80, name: "http" }, { port: 9090 }] }),
    service({ kind: "MeshService", name: "pay", mesh: "other-mesh" }),
    service({ kind: "MeshExternalService", name: "ext", ports: [{ port: 443 }] }),
    service({ kind: "MeshMultiZoneService", name: "mz" }),
  ]);
  const cases: Array<[string, string | undefined, string | undefined]> = [
    // [kri, expected key, expected port section]
    ["kri_msvc_default__shop_orders_http", "MeshService/orders.shop:http", "http"],
    ["kri_msvc_default__shop_orders_9090", "MeshService/orders.shop:9090", "9090"],
    ["kri_msvc_default__shop_orders_80", "MeshService/orders.shop:http", "http"],
    ["kri_msvc_default__other_orders_http", "MeshService/orders.other:http", "http"],
    ["kri_msvc_default__shop_orders.shop_http", "MeshService/orders.shop:http", "http"],
    // no section: the only port of a one-port service, none of a two-port one
    ["kri_msvc_default__other_orders_", "MeshService/orders.other:http", "http"],
    ["kri_msvc_default__shop_orders_", "MeshService/orders.shop:", undefined],
    // a section the service does not have: the service without a port
    ["kri_msvc_default__shop_orders_grpc", "MeshService/orders.shop:", undefined],
    ["kri_extsvc_default___ext_", "MeshExternalService/ext:443", "443"],
    ["kri_mzsvc_default___mz_http", "MeshMultiZoneService/mz:http", "http"],
    // not known: wrong kind, wrong mesh, wrong namespace, wrong name
    ["kri_mzsvc_default__shop_orders_http", undefined, undefined],
    ["kri_msvc_default___pay_http", undefined, undefined],
    ["kri_msvc_other-mesh___pay_http", "MeshService/pay:http", "http"],
    ["kri_msvc_default__nowhere_orders_http", undefined, undefined],
    ["kri_msvc_default__shop_invoices_http", undefined, undefined],
  ];
  for (const [text, key, section] of cases) {
    // when the outbound KRI is resolved; then the destination's key and port match
    const dest = outboundDestination(plan, kri(text));
    t.is(dest?.key, key, text);
    t.is(dest?.port === undefined ? undefined : (dest.port.name ?? String(dest.port.port)), section, text);
    if (dest) t.is("port" in dest, section !== undefined, `${text}: no port key without a port`);
  }
});

const MRL = `
type: MeshRateLimit
name: slow
spec: {targetRef: {kind: Mesh, proxyTypes: [Sidecar]}, from: [{targetRef: {kind: Mesh}, default: {local: {http: {requestRate: {num: 5, interval: 1s}}}}}]}
`;

function dpWith(inbounds: Dataplane["inbounds"]): Dataplane {
  return { mesh: "default", name: "dp-1", proxyType: "Sidecar", labels: {}, inbounds };
}

test("inspect views › _inbounds/{kri}/_policies finds the inbound by its name, else by its port", (t) => {
  // given a dataplane with a named inbound on 8080 and an unnamed one on 9090, and a Mesh-wide MeshRateLimit `from` (whose from entries Kuma lists as inbound rules)
  const policies = parsePolicyText(MRL, undefined, { kumaVersion: "2.14" }).policies;
  const dp = dpWith([
    { name: "http", declaredName: "http", port: 8080, tags: { "kuma.io/service": "web" } },
    { name: "9090", port: 9090, tags: { "kuma.io/service": "web" } },
  ]);
  const cases: Array<[string, boolean]> = [["http", true], ["9090", true], ["8080", false], ["grpc", false], ["", false]];
  for (const [section, found] of cases) {
    // when the inbound's policies are asked for by section name; then only a name or an unnamed inbound's port finds it
    const got = inboundPolicies(policies, dp, section, { kumaVersion: "2.14" });
    t.is(got !== undefined, found, section);
    if (found) {
      t.deepEqual(got, {
        policies: [{ kind: "MeshRateLimit", origins: [{ kri: "kri_mrl_default___slow_" }], rules: [{ conf: { local: { http: { requestRate: { num: 5, interval: "1s" } } } }, kri: "kri_mrl_default___slow_" }] }],
      }, section);
    }
  }
});

test("inspect views › _rules lists the matches of a route to a MeshService by labels even when no MeshService resource shows its rules", (t) => {
  // given (2.14) a route to MeshService labels that no known MeshService carries
  const text = `type: MeshHTTPRoute\nname: r\nspec: {targetRef: {kind: Mesh}, to: [{targetRef: {kind: MeshService, labels: {app: orders}}, rules: [{matches: [{path: {type: PathPrefix, value: /a}}], default: {}}]}]}\n`;
  const policies = parsePolicyText(text, undefined, { kumaVersion: "2.14" }).policies;
  const dp = dataplaneFromTags("default", "kuma.io/service=web").dataplane!;
  // when the _rules view is computed; then no rule shows it, yet httpMatches lists its match (Kuma's legacy to-rules)
  const view = inspectRules(policies, dp, { kumaVersion: "2.14" });
  const match = [{ path: { type: "PathPrefix", value: "/a" } }];
  t.deepEqual(view.rules, []);
  t.deepEqual(view.httpMatches, [{ hash: matchesHash(match as never), match }]);
  // and under 3.0 (no legacy to-rules) it is not listed
  t.deepEqual(inspectRules(policies, dp, { kumaVersion: "3.0" }).httpMatches, []);
});

test("inspect views › withDefaultWeights adds weight 1 only to backendRefs that have none", (t) => {
  const cases: Array<[string, unknown, unknown]> = [
    ["no rules", { x: 1 }, { x: 1 }],
    ["not an object", null, null],
    ["rules not a list", { rules: "x" }, { rules: "x" }],
    ["no backendRefs", { rules: [{ matches: [], default: { filters: [] } }] }, { rules: [{ matches: [], default: { filters: [] } }] }],
    ["no default", { rules: [{ matches: [] }] }, { rules: [{ matches: [] }] }],
    [
      "mixed backendRefs",
      { rules: [{ matches: [], default: { backendRefs: [{ kind: "MeshService", name: "a" }, { kind: "MeshService", name: "b", weight: 0 }, "odd", null] } }] },
      { rules: [{ matches: [], default: { backendRefs: [{ kind: "MeshService", name: "a", weight: 1 }, { kind: "MeshService", name: "b", weight: 0 }, "odd", null] } }] },
    ],
  ];
  for (const [name, input, want] of cases) t.deepEqual(withDefaultWeights(input), want, name);
});

test("inspect views › matchesHash is Kuma's HashMatches: SHA-256 of the Go JSON of the match list", async (t) => {
  const { createHash } = await import("node:crypto");
  const sha = (json: string) => createHash("sha256").update(json).digest("base64");
  const cases: Array<[string, unknown[], string]> = [
    ["path only", [{ path: { type: "PathPrefix", value: "/a" } }], `[{"path":{"value":"/a","type":"PathPrefix"}}]`],
    [
      "every field, in Go's field order",
      [{ headers: [{ name: "x-h", value: "v", type: "Exact" }], queryParams: [{ value: "1", name: "q", type: "Exact" }], method: "POST", path: { value: "/b", type: "Exact" } }],
      `[{"path":{"value":"/b","type":"Exact"},"method":"POST","queryParams":[{"type":"Exact","name":"q","value":"1"}],"headers":[{"type":"Exact","name":"x-h","value":"v"}]}]`,
    ],
    ["a header without type or value", [{ headers: [{ name: "x-h" }] }], `[{"headers":[{"name":"x-h"}]}]`],
    ["a header with an empty value", [{ headers: [{ type: "Present", name: "x-h", value: "" }] }], `[{"headers":[{"type":"Present","name":"x-h"}]}]`],
    ["two matches", [{ method: "GET" }, { method: "PUT" }], `[{"method":"GET"},{"method":"PUT"}]`],
  ];
  for (const [name, matches, goJson] of cases) t.is(matchesHash(matches as never), sha(goJson), name);
});

test("inspect views › _rules lists inbounds by port and httpMatches by hash", (t) => {
  // given a Mesh-wide MeshRateLimit, a dataplane whose inbounds are declared 9090 before 8080, and a route with four matches
  const mrl = parsePolicyText(MRL, undefined, { kumaVersion: "2.14" }).policies;
  const dp = dpWith([
    { name: "9090", port: 9090, tags: { "kuma.io/service": "web" } },
    { name: "8080", port: 8080, tags: { "kuma.io/service": "web" } },
  ]);
  const paths = ["/a", "/b", "/c", "/d", "/e"];
  const route = `type: MeshHTTPRoute\nname: r\nspec: {targetRef: {kind: Mesh}, to: [{targetRef: {kind: MeshService, name: orders}, rules: [${paths.map((p) => `{matches: [{path: {type: PathPrefix, value: "${p}"}}], default: {}}`).join(", ")}]}]}\n`;
  const policies = [...mrl, ...parsePolicyText(route, undefined, { kumaVersion: "2.14" }).policies];
  // when the _rules view is computed
  const view = inspectRules(policies, dp, { kumaVersion: "2.14" });
  // then the MeshRateLimit's inbound rules come in port order
  const mrlRule = view.rules.find((r) => r.type === "MeshRateLimit")!;
  t.deepEqual(mrlRule.inboundRules.map((e) => e.inbound.port), [8080, 9090]);
  // and every match is listed once, sorted by its hash
  const hashes = view.httpMatches.map((m) => m.hash);
  t.is(hashes.length, paths.length);
  t.deepEqual(hashes, [...hashes].sort());
  t.deepEqual([...hashes].sort(), paths.map((p) => matchesHash([{ path: { type: "PathPrefix", value: p } }] as never)).sort());
});
