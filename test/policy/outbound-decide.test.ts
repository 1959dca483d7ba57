// outbound decide › which service an outbound request is decided for (a real MeshService only when routes exist, else a kuma.io/service candidate) and the edits Envoy drops, named in the reason.
import test from "ava";
import type { RequestFacts } from "../../extproc/decision.js";
import { dataplaneFromTags } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import type { MeshResources } from "../../extproc/policy/documents/resources.js";

// A MeshService `api` claiming the host api.internal (port 9000).
const API: MeshResources = { meshes: [], services: [{ kind: "MeshService", mesh: "default", name: "api", displayName: "api", labels: {}, ports: [{ port: 9000 }], hosts: ["api.internal"], spec: {} }] };
const route = (service: string, filters = "[]") => `type: MeshHTTPRoute
name: to-${service}
mesh: default
spec:
  targetRef: {kind: Mesh}
  to:
    - targetRef: {kind: MeshService, name: ${service}}
      rules:
        - matches: [{path: {type: PathPrefix, value: /}}]
          default:
            filters: ${filters}
`;
function outbound(yaml: string, authority: string, resources?: MeshResources) {
  const e = new PolicyEngine({ dataplane: dataplaneFromTags("default", "kuma.io/service=web").dataplane!, nowMs: () => 0 });
  const parsed = parsePolicyText(yaml, "outbound.yaml");
  if (parsed.rejected.length > 0) throw new Error(JSON.stringify(parsed.rejected));
  e.replace(parsed.policies, resources);
  const facts: RequestFacts = { direction: "outbound", method: "GET", path: "/x", authority, scheme: "http", headers: new Map(), peerUriSans: [] };
  return e.evaluate(facts).outbound!;
}

test("outbound decide › with no route at all, a MeshService claiming the host is not looked up: the service is the host's candidate name", (t) => {
  // given no route and a MeshService for api.internal; when a request goes to api.internal:9000
  const ob = outbound("", "api.internal:9000", API);
  // then it is decided for the last candidate name, with no destination resource
  t.is(ob.service, "api_internal");
  t.is(ob.destination, undefined);
  t.is(ob.decision.explain.reason, "no MeshHTTPRoute for destination api_internal");
});

test("outbound decide › with routes, the MeshService claiming the host is the destination", (t) => {
  // given a route (for another service) and the MeshService; when a request goes to api.internal:9000
  const ob = outbound(route("other"), "api.internal:9000", API);
  // then the destination is the MeshService and its name the service
  t.is(ob.service, "api");
  t.is(ob.destination?.key, "MeshService/api:9000");
});

test("outbound decide › the first candidate a route names is the service, not the last candidate", (t) => {
  // given a route for the kuma.io/service "a.b"; when a request goes to a.b:80 (candidates a.b, a_b)
  const ob = outbound(route("a.b"), "a.b:80");
  // then "a.b" is decided, and its route matched
  t.is(ob.service, "a.b");
  t.like(ob.decision.explain, { kind: "MeshHTTPRoute", policy: "to-a.b" });
});

test("outbound decide › edits Envoy drops in both directions are named in the reason, request then response", (t) => {
  // given a route setting an x-envoy header on the request and on the response
  const filters = `[{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-envoy-a, value: "1"}]}}, {type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: x-envoy-b, value: "2"}]}}]`;
  // when a request matches it
  const ob = outbound(route("api", filters), "api:80");
  // then the reason lists both drops
  t.is(ob.decision.explain.reason, "GET /x to api matched to[0].rules[0].matches[0]; Envoy drops (ext_proc mutation_rules): request set x-envoy-a (envoy-header); response set x-envoy-b (envoy-header)");
});

test("outbound decide › a response-only drop is named alone", (t) => {
  const filters = `[{type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: x-envoy-b, value: "2"}]}}]`;
  const ob = outbound(route("api", filters), "api:80");
  t.is(ob.decision.explain.reason, "GET /x to api matched to[0].rules[0].matches[0]; Envoy drops (ext_proc mutation_rules): response set x-envoy-b (envoy-header)");
});
