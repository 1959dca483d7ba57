// explain › POST /explain handler: validation errors as 400 with violations, reports without side effects.
import test from "ava";
import { dataplaneFromTags } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { explainHandler } from "../../extproc/policy/views/explain-route.js";
import type { ExplainReport } from "../../extproc/policy/views/explain.js";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";

const POLICIES = `
type: MeshTrafficPermission
name: base
spec: {targetRef: {kind: Mesh}, from: [{targetRef: {kind: Mesh}, default: {action: Deny}}]}
---
type: MeshTrafficPermission
name: web
spec: {targetRef: {kind: MeshService, name: backend}, from: [{targetRef: {kind: MeshService, name: web}, default: {action: Allow}}]}
---
type: MeshRateLimit
name: one
spec: {targetRef: {kind: MeshService, name: backend}, from: [{targetRef: {kind: Mesh}, default: {local: {http: {requestRate: {num: 1, interval: 1m}}}}}]}
`;

function setup(): (body: string | Uint8Array) => { status: number; body: unknown } {
  const engine = new PolicyEngine({ dataplane: dataplaneFromTags("default", "kuma.io/service=backend").dataplane!, nowMs: () => 0 });
  engine.replace(parsePolicyText(POLICIES).policies);
  return explainHandler(engine);
}

test("explain › lists matched policies in precedence order with the merged conf", (t) => {
  const r = setup()(JSON.stringify({ client: { xfcc: "URI=spiffe://default/web" }, path: "/x" }));
  t.is(r.status, 200);
  const report = r.body as ExplainReport;
  t.is(report.decision.explain.action, "allow");
  t.deepEqual(report.policies.map((p) => `${p.kind}/${p.name}/${p.contributed}`), ["MeshTrafficPermission/base/true", "MeshTrafficPermission/web/true", "MeshRateLimit/one/true"]);
  t.deepEqual(report.merged.MeshTrafficPermission, { action: "Allow" });
});

test("explain › is a dry run: it never consumes rate-limit tokens", (t) => {
  const handler = setup();
  const body = JSON.stringify({ client: { tags: { "kuma.io/service": "web" } } });
  for (let i = 0; i < 3; i++) t.is((handler(body).body as ExplainReport).decision.explain.action, "allow");
});

test("explain › rules: true adds Kuma's rule list", (t) => {
  const report = setup()(JSON.stringify({ client: { tags: {} }, rules: true })).body as ExplainReport;
  t.is(report.rules?.MeshTrafficPermission?.length, 2);
});

test("explain › bad JSON and bad fields answer 400 with every violation", (t) => {
  const handler = setup();
  t.is(handler("{").status, 400);
  const r = handler(JSON.stringify({ direction: "sideways", client: { tags: { a: 1 } } }));
  t.is(r.status, 400);
  const fields = (r.body as { invalid_parameters: Array<{ field: string }> }).invalid_parameters.map((v) => v.field);
  t.deepEqual(fields, ["direction", "client.tags"]);
});

const RULES_POLICY = `
type: MeshTrafficPermission
name: shop-only
spec: {rules: [{default: {allow: [{spiffeID: {type: Prefix, value: "spiffe://default.z1.mesh.local/ns/shop"}}]}}]}
`;

function rulesSetup(): (body: string) => { status: number; body: unknown } {
  const engine = new PolicyEngine({ dataplane: dataplaneFromTags("default", "kuma.io/service=backend", "backend-1").dataplane!, nowMs: () => 0 });
  engine.replace(parsePolicyText(RULES_POLICY).policies);
  return explainHandler(engine);
}

test("explain › a client given as spiffeID is matched against 2.14 rules and the rule view is Kuma's _rules shape", (t) => {
  // given an MTP with rules; when explained for a SPIFFE ID with rules: true; then the deciding list entry and the rule view
  const r = rulesSetup()(JSON.stringify({ client: { spiffeID: "spiffe://default.z1.mesh.local/ns/shop/sa/web" }, rules: true }));
  t.is(r.status, 200);
  const report = r.body as ExplainReport;
  t.is(report.decision.explain.action, "allow");
  t.is(report.decision.explain.rule, "rules[0].default.allow[0]");
  t.deepEqual(report.matchedRules?.MeshTrafficPermission?.map((m) => m.policy), ["shop-only"]);
  t.is(report.dataplaneRules?.resource.name, "backend-1");
  t.deepEqual(report.dataplaneRules?.rules.map((x) => x.type), ["MeshTrafficPermission"]);
});

test("explain › a client given as request headers is identified from the XFCC", (t) => {
  // given the same policy; when explained with an XFCC header of another namespace; then denied by default
  const r = rulesSetup()(JSON.stringify({ headers: { "x-forwarded-client-cert": "By=spiffe://default.z1.mesh.local/ns/shop/sa/backend;URI=spiffe://default.z1.mesh.local/ns/other/sa/x" } }));
  const report = r.body as ExplainReport;
  t.is(report.decision.explain.action, "deny");
  t.is(report.client?.source, "xfcc");
});

test("explain › a spiffeID that is not a string is a 400 with the field", (t) => {
  const r = rulesSetup()(JSON.stringify({ client: { spiffeID: 42 } }));
  t.is(r.status, 400);
  t.deepEqual((r.body as { invalid_parameters: Array<{ field: string }> }).invalid_parameters.map((v) => v.field), ["client.spiffeID"]);
});

test("explain › an empty or blank body is the default request, answered like {}", (t) => {
  // given the handler; when the body is empty, blank, or empty bytes; then it is explained exactly like `{}`
  const handler = setup();
  const expected = handler("{}");
  t.is(expected.status, 200);
  for (const body of ["", "  \n\t", new Uint8Array()]) t.deepEqual(handler(body), expected, JSON.stringify(body));
});

test("explain › the handler's error bodies name what went wrong", (t) => {
  const handler = setup();
  // given a body that is not JSON; then 400 says so, with the parser's detail
  const bad = handler("{");
  t.is(bad.status, 400);
  const body = bad.body as { error: string; detail: string };
  t.is(body.error, "body is not JSON");
  t.is(typeof body.detail, "string");
  t.true(body.detail.length > 0);
  // given JSON with a bad field; then 400 "invalid explain request" with the violations
  const invalid = handler(JSON.stringify({ direction: "sideways" }));
  t.is(invalid.status, 400);
  t.is((invalid.body as { error: string }).error, "invalid explain request");
});

test("explain › the source's rejected policies are shown only when there are any", (t) => {
  // given an engine and a source that rejected one policy
  const engine = new PolicyEngine({ dataplane: dataplaneFromTags("default", "kuma.io/service=backend").dataplane!, nowMs: () => 0 });
  engine.replace(parsePolicyText(POLICIES).policies);
  const refused = [{ index: 0, kind: "MeshTrafficPermission", name: "broken", violations: [{ field: "spec", message: "bad" }] }];
  // when explained with and without rejections; then `rejected` lists them, and is absent otherwise
  const withRejected = explainHandler(engine, () => refused as never)("{}");
  t.is(withRejected.status, 200);
  t.deepEqual((withRejected.body as { rejected?: unknown }).rejected, refused);
  t.false("rejected" in (explainHandler(engine)("{}").body as object));
  t.false("rejected" in (explainHandler(engine, () => [])("{}").body as object));
});

test("explain › a failure while explaining answers 500 with its message", (t) => {
  // given a rejection source that throws; when explained; then 500 with the error's message, never a throw
  const engine = new PolicyEngine({ dataplane: dataplaneFromTags("default", "kuma.io/service=backend").dataplane!, nowMs: () => 0 });
  const reply = explainHandler(engine, () => {
    throw new Error("source broke");
  })("{}");
  t.deepEqual(reply, { status: 500, body: { error: "source broke" } });
});

test("explain › parseExplainInput reports every bad field with its path and message", async (t) => {
  const { parseExplainInput } = await import("../../extproc/policy/views/explain.js");
  const SPIFFE = "must be a SPIFFE ID or a list of URI SANs";
  const TAGS = "must map tag keys to a string or a list of strings";
  const cases: Array<[string, unknown, Array<[string, string]>]> = [
    ["no body", undefined, [["body", "must be defined"]]],
    ["a string body", "x", [["body", "must be an object"]]],
    ["a list body", [], [["body", "must be an object"]]],
    ["empty spiffeID list", { client: { spiffeID: [] } }, [["client.spiffeID", SPIFFE]]],
    ["empty spiffeID", { client: { spiffeID: [""] } }, [["client.spiffeID", SPIFFE]]],
    ["spiffeID a number", { client: { spiffeID: 5 } }, [["client.spiffeID", SPIFFE]]],
    ["spiffeID list with a number", { client: { spiffeID: ["spiffe://default/web", 1] } }, [["client.spiffeID", SPIFFE]]],
    ["tag value a number", { client: { tags: { a: 1 } } }, [["client.tags", TAGS]]],
    ["tag list with a number", { client: { tags: { a: ["x", 1] } } }, [["client.tags", TAGS]]],
    ["tags not an object", { client: { tags: "x" } }, [["client.tags", "must be an object"]]],
    ["bad xfcc, kumaTags, sni, uriSans", { client: { xfcc: 1, kumaTags: 2, sni: 3, uriSans: "u" } }, [["client.xfcc", "must be a string"], ["client.kumaTags", "must be a string"], ["client.uriSans", "must be a list"], ["client.sni", "must be a string"]]],
    [
      "every top-level field wrong",
      { client: "x", headers: "y", method: 1, path: 2, authority: 3, direction: "up" },
      [["direction", "must be one of inbound, outbound"], ["headers", "must be an object"], ["client", "must be an object"], ["method", "must be a string"], ["path", "must be a string"], ["authority", "must be a string"]],
    ],
  ];
  for (const [name, body, want] of cases) {
    // given a bad body; when parsed; then no input, and each violation names its field
    const r = parseExplainInput(body);
    t.is(r.input, undefined, name);
    t.deepEqual(r.violations.map((v) => [v.field, v.message]), want, name);
  }
});

test("explain › parseExplainInput turns a described request into request facts", async (t) => {
  const { parseExplainInput } = await import("../../extproc/policy/views/explain.js");
  const { tagSetToObject } = await import("../../extproc/policy/decide/identity.js");
  const base = { direction: "inbound", method: "GET", path: "/", authority: "", scheme: "http", headers: {}, peerUriSans: [] };
  const cases: Array<[string, unknown, Record<string, unknown>, { inbound?: string; withRules?: boolean; identity?: unknown }]> = [
    ["defaults", {}, base, {}],
    [
      "every field",
      { direction: "outbound", method: "post", path: "/x", authority: "a.b", headers: { "X-A": "1", ":authority": "h" }, client: { xfcc: "X", kumaTags: "K", uriSans: ["u", 3], sni: "s" }, inbound: 8080, rules: true },
      { direction: "outbound", method: "POST", path: "/x", authority: "a.b", scheme: "http", headers: { "x-a": "1", ":authority": "h", "x-forwarded-client-cert": "X", "x-kuma-tags": "K" }, peerUriSans: ["u"], sni: "s" },
      { inbound: "8080", withRules: true },
    ],
    ["authority from the :authority header; rules only when true", { headers: { ":authority": "h" }, rules: "true" }, { ...base, authority: "h", headers: { ":authority": "h" } }, {}],
    ["empty xfcc and kumaTags add no header", { client: { xfcc: "", kumaTags: "", sni: "" } }, base, {}],
    ["described tags", { client: { tags: { a: ["x", "y"], b: "z" } } }, base, { identity: { source: "described", ignored: [], tags: { a: ["x", "y"], b: ["z"] } } }],
    ["spiffeID with tags keeps the SPIFFE identity", { client: { spiffeID: "spiffe://default/web", tags: { b: "z" } } }, base, { identity: { source: "described", ignored: [], spiffe: "spiffe://default/web", tags: { b: ["z"] } } }],
  ];
  for (const [name, body, facts, rest] of cases) {
    // given a valid body; when parsed; then its facts, identity, inbound and rules flag
    const { input, violations } = parseExplainInput(body);
    t.deepEqual(violations, [], name);
    t.deepEqual({ ...input!.facts, headers: Object.fromEntries(input!.facts.headers) }, facts, name);
    t.is(input!.inbound, rest.inbound, name);
    t.is(input!.withRules, rest.withRules ?? false, name);
    const id = input!.identity;
    t.deepEqual(id ? { ...id, tags: tagSetToObject(id.tags) } : undefined, rest.identity, name);
  }
});

test("explain › proxy.mtls tells whether the Mesh resource has mTLS on, off, or is unknown", async (t) => {
  const { resourcesOf } = await import("../../extproc/policy/documents/resources.js");
  const cases: Array<[string, string, string]> = [
    ["no Mesh resource", "", "unknown"],
    ["mTLS enabled", "type: Mesh\nname: default\nmtls: {enabledBackend: ca-1, backends: [{name: ca-1, type: builtin}]}\n---\n", "on"],
    ["backends but none enabled", "type: Mesh\nname: default\nmtls: {backends: [{name: ca-1, type: builtin}]}\n---\n", "off"],
  ];
  for (const [name, mesh, state] of cases) {
    // given the policies with (or without) a Mesh resource; when a request is explained; then proxy.mtls is its state
    const parsed = parsePolicyText(mesh + POLICIES);
    const engine = new PolicyEngine({ dataplane: dataplaneFromTags("default", "kuma.io/service=backend").dataplane!, nowMs: () => 0 });
    engine.replace(parsed.policies, resourcesOf(parsed.resources));
    const report = explainHandler(engine)("{}").body as ExplainReport;
    t.deepEqual(report.proxy, { mtls: state }, name);
  }
});

const ROUTES = `
type: MeshHTTPRoute
name: a
spec: {targetRef: {kind: Mesh}, to: [{targetRef: {kind: MeshService, name: orders}, rules: [{matches: [{path: {type: PathPrefix, value: /v2}}], default: {filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-a, value: "1"}]}}]}}]}]}
---
type: MeshHTTPRoute
name: b
spec: {targetRef: {kind: Mesh}, to: [{targetRef: {kind: MeshService, name: payments}, rules: [{matches: [{path: {type: PathPrefix, value: /}}], default: {}}]}]}
`;

test("explain › an outbound request reports its destination, the routes, the one that contributed and its merged conf", (t) => {
  // given two routes, to orders and to payments, on the calling proxy
  const engine = new PolicyEngine({ dataplane: dataplaneFromTags("default", "kuma.io/service=web").dataplane!, nowMs: () => 0 });
  engine.replace(parsePolicyText(ROUTES).policies);
  const handler = explainHandler(engine);
  // when a request to orders matches route a's rule; then a contributed, its conf is merged, and no inbound details are shown
  const hit = handler(JSON.stringify({ direction: "outbound", authority: "orders", path: "/v2/x" })).body as ExplainReport;
  t.is(hit.destination, "orders");
  t.is(hit.direction, "outbound");
  t.deepEqual(hit.policies.map((p) => `${p.name}/${p.contributed}`).sort(), ["a/true", "b/false"]);
  t.deepEqual(hit.merged, { MeshHTTPRoute: { filters: [{ type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "x-a", value: "1" }] } }] } });
  for (const key of ["rules", "dataplaneRules", "notApplied", "proxy", "client", "regions", "inbound"]) t.false(key in hit, key);
  // when a request to orders matches no rule, with rules: true; then nothing contributed or merged, and the rule lists show orders' route
  const miss = handler(JSON.stringify({ direction: "outbound", authority: "orders", path: "/x", rules: true })).body as ExplainReport;
  t.deepEqual(miss.policies.map((p) => `${p.name}/${p.contributed}`).sort(), ["a/false", "b/false"]);
  t.deepEqual(miss.merged, {});
  t.deepEqual(miss.rules, {
    MeshHTTPRoute: [{ subset: [], conf: { matches: [{ path: { type: "PathPrefix", value: "/v2" } }], default: { filters: [{ type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "x-a", value: "1" }] } }] } }, origin: ["a to[0].rules[0]"] }],
  } as never);
  t.deepEqual(miss.dataplaneRules?.rules.map((r) => r.type), ["MeshHTTPRoute"]);
});
