// select › keeping only the policies that can select this dataplane never changes a decision (property test),
// and what is dropped is exactly what cannot select it.
import test from "ava";
import fc from "fast-check";
import type { RequestFacts } from "../../extproc/decision.js";
import { dataplaneFromObject, type Dataplane } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import type { KumaVersion } from "../../extproc/policy/model/kuma-version.js";
import { parsePolicyText, validatePolicyObject } from "../../extproc/policy/documents/parse.js";
import { seededRandom } from "../../extproc/policy/decide/random.js";
import { NO_RESOURCES, resourcesOf, type MeshResources } from "../../extproc/policy/documents/resources.js";
import { mightSelect, selectForDataplane } from "../../extproc/policy/selection/select.js";
import type { Policy } from "../../extproc/policy/model/types.js";

const SERVICES = ["backend", "web", "other"];
const service = fc.constantFrom(...SERVICES);
const tags = fc.record({ version: fc.constantFrom("v1", "v2") }, { requiredKeys: [] }).chain((t) => fc.record({ zone: fc.constantFrom("a", "b") }, { requiredKeys: [] }).map((z) => ({ ...t, ...z })));
const someTags = tags.filter((t) => Object.keys(t).length > 0);
const proxyTypes = fc.option(fc.constantFrom(["Sidecar"], ["Gateway"], ["Sidecar", "Gateway"]), { nil: undefined });

/** Top-level targetRefs of every 2.6 kind, including routes by name and proxy types. */
const topRef = fc.oneof(
  proxyTypes.map((p) => ({ kind: "Mesh", ...(p ? { proxyTypes: p } : {}) })),
  fc.tuple(someTags, proxyTypes).map(([t, p]) => ({ kind: "MeshSubset", tags: t, ...(p ? { proxyTypes: p } : {}) })),
  service.map((name) => ({ kind: "MeshService", name })),
  fc.tuple(service, someTags).map(([name, t]) => ({ kind: "MeshServiceSubset", name, tags: t })),
  fc.constantFrom("route-0", "route-1").map((name) => ({ kind: "MeshHTTPRoute", name })),
  fc.constant({ kind: "MeshGateway", name: "gw" }),
);
const fromRef = fc.oneof(
  fc.constant({ kind: "Mesh" }),
  service.map((name) => ({ kind: "MeshService", name })),
  someTags.map((t) => ({ kind: "MeshSubset", tags: t })),
  fc.tuple(service, someTags).map(([name, t]) => ({ kind: "MeshServiceSubset", name, tags: t })),
);
const confOf: Record<string, fc.Arbitrary<object>> = {
  MeshTrafficPermission: fc.constantFrom("Allow", "Deny", "AllowWithShadowDeny").map((action) => ({ action })),
  MeshFaultInjection: fc.integer({ min: 0, max: 100 }).map((percentage) => ({ http: [{ abort: { httpStatus: 503, percentage } }] })),
  MeshRateLimit: fc.integer({ min: 1, max: 3 }).map((num) => ({ local: { http: { requestRate: { num, interval: "10s" } } } })),
};

/** A raw universal policy document; small name and mesh pools make duplicates and other-mesh policies common. */
const policyDoc = fc.oneof(
  fc.tuple(fc.constantFrom("MeshTrafficPermission", "MeshFaultInjection", "MeshRateLimit"), topRef, fc.nat(4), fc.constantFrom("default", "default", "other")).chain(([type, targetRef, n, mesh]) =>
    fc.array(fc.record({ targetRef: type === "MeshRateLimit" ? fc.constant({ kind: "Mesh" }) : fromRef, default: confOf[type]! }), { minLength: 1, maxLength: 3 }).map((from) => ({ type, name: `p-${n}`, mesh, spec: { targetRef, from } })),
  ),
  fc.tuple(topRef, fc.constantFrom("route-0", "route-1"), service, fc.constantFrom("/a", "/b")).map(([targetRef, name, to, prefix]) => ({
    type: "MeshHTTPRoute", name, mesh: "default",
    spec: { targetRef, to: [{ targetRef: { kind: "MeshService", name: to }, rules: [{ matches: [{ path: { type: "PathPrefix", value: prefix } }], default: { filters: [{ type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "x-route", value: `${name}${prefix}` }] } }] } }] }] },
  })),
);

const dataplane: fc.Arbitrary<Dataplane> = fc.tuple(fc.constantFrom("Sidecar", "Gateway") as fc.Arbitrary<"Sidecar" | "Gateway">, fc.array(fc.tuple(service, tags), { minLength: 1, maxLength: 2 })).map(([proxyType, ibs]) => ({
  mesh: "default", name: "dp", proxyType,
  inbounds: ibs.map(([svc, t], i) => ({ name: String(8080 + i), port: 8080 + i, tags: { "kuma.io/service": svc, ...t } })),
}));

const request: fc.Arbitrary<RequestFacts> = fc.tuple(fc.boolean(), service, tags, fc.constantFrom(8080, 8081), fc.constantFrom("/a/x", "/b", "/")).map(([outbound, svc, t, port, path]) => ({
  direction: outbound ? "outbound" : "inbound", method: "GET", path, scheme: "http", headers: new Map(),
  authority: outbound ? `${svc}:80` : `localhost:${port}`,
  peerUriSans: [`spiffe://default/${svc}`, ...Object.entries(t).map(([k, v]) => `kuma://${k}/${v}`)],
}));

function validated(docs: unknown[], version: KumaVersion = "2.6"): Policy[] {
  return docs.map((d) => validatePolicyObject(d, version).policy).filter((p): p is Policy => p !== undefined);
}

/** Every decision of a fresh engine (seeded random, ticking clock) over `requests`. */
function decisions(policies: readonly Policy[], dp: Dataplane, requests: RequestFacts[], kumaVersion: KumaVersion = "2.6", resources: MeshResources = NO_RESOURCES): unknown[] {
  let now = 0;
  const engine = new PolicyEngine({ dataplane: dp, random: seededRandom(7), nowMs: () => (now += 5), kumaVersion });
  engine.replace(policies, resources);
  return requests.map((r) => engine.decide(r));
}

test("select › property (2.6 dialect): for random policy sets and requests, decisions with and without the filter are identical", (t) => {
  // given random mesh-wide sets (both meshes, duplicates, routes by name, proxy types), dataplanes and requests;
  // when the engine gets the whole set, and another gets only what selectForDataplane keeps; then every decision is the same
  let dropped = 0;
  let kept = 0;
  fc.assert(
    fc.property(fc.array(policyDoc, { maxLength: 25 }), dataplane, fc.array(request, { minLength: 1, maxLength: 8 }), (docs, dp, requests) => {
      const all = validated(docs);
      const selection = selectForDataplane(all, dp, "2.6");
      dropped += selection.total - selection.kept.length;
      kept += selection.kept.length;
      t.deepEqual(decisions(selection.kept, dp, requests), decisions(all, dp, requests));
      // the per-policy form used by file-by-file sources never drops what the exact pass keeps
      t.true(selection.kept.every((p) => mightSelect(p, dp, "2.6")));
    }),
    { numRuns: 300, seed: 17 },
  );
  // the generator exercised both sides: policies were kept and policies were dropped
  t.true(kept > 100, `kept ${kept}`);
  t.true(dropped > 100, `dropped ${dropped}`);
});

// The 2.14 dialect: top-level `kind: Dataplane` by labels, name (+ namespace) and sectionName, absent
// targetRef, proxyTypes, zone-scoped policies, `rules[]` with SPIFFE-ID matches, under an mTLS Mesh.
const SPIFFE = "spiffe://default.z1.mesh.local/ns/shop/sa/";
const spiffeMatch = fc.tuple(fc.constantFrom("Exact", "Prefix"), fc.constantFrom("web", "bot", "")).map(([type, sa]) => ({ spiffeID: { type, value: type === "Exact" ? `${SPIFFE}${sa || "web"}` : `${SPIFFE}${sa}`.replace(/\/$/, "") } }));
const dpRef = fc.oneof(
  fc.constant(undefined),
  proxyTypes.map((p) => ({ kind: "Mesh", ...(p ? { proxyTypes: p } : {}) })),
  fc.constant({ kind: "Dataplane" }),
  fc.tuple(fc.constantFrom("orders", "web"), fc.option(fc.constantFrom("http", "9090"), { nil: undefined })).map(([app, sectionName]) => ({ kind: "Dataplane", labels: { app }, ...(sectionName ? { sectionName } : {}) })),
  fc.tuple(fc.constantFrom("orders-1", "orders-2"), fc.option(fc.constantFrom("http", "8080"), { nil: undefined })).map(([name, sectionName]) => ({ kind: "Dataplane", name, ...(sectionName ? { sectionName } : {}) })),
  service.map((name) => ({ kind: "MeshService", name })),
);
const rulesOf: Record<string, fc.Arbitrary<object>> = {
  MeshTrafficPermission: fc.record({ allow: fc.array(spiffeMatch, { maxLength: 2 }), deny: fc.array(spiffeMatch, { maxLength: 1 }), allowWithShadowDeny: fc.array(spiffeMatch, { maxLength: 1 }) }, { requiredKeys: [] })
    .map((d) => ({ default: Object.fromEntries(Object.entries(d).filter(([, v]) => (v as unknown[]).length > 0)) })),
  MeshFaultInjection: fc.integer({ min: 0, max: 100 }).map((percentage) => ({ default: { http: [{ abort: { httpStatus: 503, percentage } }] } })),
  MeshRateLimit: fc.integer({ min: 1, max: 3 }).map((num) => ({ default: { local: { http: { requestRate: { num, interval: "10s" } } } } })),
};
const policyDoc214 = fc
  .tuple(fc.constantFrom("MeshTrafficPermission", "MeshFaultInjection", "MeshRateLimit"), dpRef, fc.nat(4), fc.constantFrom("default", "default", "other"), fc.option(fc.constantFrom("z1", "z2"), { nil: undefined }))
  .chain(([type, targetRef, n, mesh, zone]) =>
    fc.array(rulesOf[type]!, { minLength: 1, maxLength: 2 }).map((rules) => ({
      type, name: `p-${n}`, mesh, ...(zone ? { labels: { "kuma.io/origin": "zone", "kuma.io/zone": zone } } : {}),
      spec: { ...(targetRef ? { targetRef } : {}), rules },
    })),
  );
const dataplane214: fc.Arbitrary<Dataplane> = fc.tuple(fc.constantFrom("orders-1", "orders-2"), fc.constantFrom("orders", "web"), fc.option(fc.constantFrom("z1", "z2"), { nil: undefined }), fc.boolean()).map(([name, app, zone, named]) =>
  dataplaneFromObject({
    type: "Dataplane", mesh: "default", name, labels: { app, ...(zone ? { "kuma.io/zone": zone, "kuma.io/origin": "zone" } : {}) },
    networking: { address: "10.0.0.7", inbound: [{ port: 8080, ...(named ? { name: "http" } : {}), tags: { "kuma.io/service": "orders" } }, { port: 9090, tags: { "kuma.io/service": "orders-admin" } }] },
  }).dataplane!,
);
const request214: fc.Arbitrary<RequestFacts> = fc.tuple(fc.constantFrom(8080, 9090), fc.constantFrom("web", "bot", "other")).map(([port, sa]) => ({
  direction: "inbound", method: "GET", path: "/", scheme: "http", headers: new Map(), authority: `localhost:${port}`, peerUriSans: [`${SPIFFE}${sa}`],
}));
// A Mesh with mTLS on, parsed when the test runs (not at import: see test/policy/engine-edges.test.ts).
const mtlsMesh = () => resourcesOf(parsePolicyText("type: Mesh\nname: default\nmtls: {enabledBackend: ca-1, backends: [{name: ca-1, type: builtin}]}\n").resources);

test("select › property (2.10–2.14 dialect): for random policy sets and requests, decisions with and without the filter are identical", (t) => {
  // given random 2.14-style sets (Dataplane labels/name/sectionName, absent targetRef, zones, rules[]), dataplanes with
  // labels, requests from SPIFFE identities, and a Kuma version from 2.10 to 2.14; when one engine gets the whole set and
  // another only what selectForDataplane keeps; then every decision is the same
  let dropped = 0;
  let kept = 0;
  const MTLS_MESH = mtlsMesh();
  fc.assert(
    fc.property(fc.constantFrom<KumaVersion>("2.10", "2.12", "2.14"), fc.array(policyDoc214, { maxLength: 20 }), dataplane214, fc.array(request214, { minLength: 1, maxLength: 6 }), (version, docs, dp, requests) => {
      const all = validated(docs, version);
      const selection = selectForDataplane(all, dp, version);
      dropped += selection.total - selection.kept.length;
      kept += selection.kept.length;
      t.deepEqual(decisions(selection.kept, dp, requests, version, MTLS_MESH), decisions(all, dp, requests, version, MTLS_MESH));
      t.true(selection.kept.every((p) => mightSelect(p, dp, version)));
    }),
    { numRuns: 300, seed: 214 },
  );
  t.true(kept > 100, `kept ${kept}`);
  t.true(dropped > 100, `dropped ${dropped}`);
});

test("select › a later non-selecting duplicate still replaces an earlier selecting one", (t) => {
  // given backend's MTP followed by a same-named MTP on web; when selecting for backend; then neither is kept
  const dp: Dataplane = { mesh: "default", name: "dp", proxyType: "Sidecar", inbounds: [{ name: "8080", port: 8080, tags: { "kuma.io/service": "backend" } }] };
  const mtp = (svc: string) => ({ type: "MeshTrafficPermission", name: "same", mesh: "default", spec: { targetRef: { kind: "MeshService", name: svc }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Deny" } }] } });
  const selection = selectForDataplane(validated([mtp("backend"), mtp("web")]), dp);
  t.deepEqual(selection, { kept: [], total: 1 });
});

test("select › a MeshHTTPRoute is kept only when its top-level targetRef selects this dataplane", (t) => {
  // given route r targeting backend or web; when selecting for backend; then only the one on backend is kept
  const dp: Dataplane = { mesh: "default", name: "dp", proxyType: "Sidecar", inbounds: [{ name: "8080", port: 8080, tags: { "kuma.io/service": "backend" } }] };
  const route = (svc: string) => ({ type: "MeshHTTPRoute", name: `r-${svc}`, mesh: "default", spec: { targetRef: { kind: "MeshService", name: svc }, to: [{ targetRef: { kind: "MeshService", name: "x" }, rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], default: {} }] }] } });
  const selection = selectForDataplane(validated([route("backend"), route("web")]), dp);
  t.deepEqual(selection.kept.map((p) => p.name), ["r-backend"]);
  t.is(selection.total, 2);
});
