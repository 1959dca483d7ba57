// Test helper: a PolicyEngine loaded from one YAML text (a Dataplane, policies, Mesh resources), asked with
// requests in /explain's described form ({inbound, client: {spiffeID}, method, path, …}).
import { dataplaneFromObject } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { parseExplainInput } from "../../extproc/policy/views/explain.js";
import { parseDocuments, validatePolicyObject } from "../../extproc/policy/documents/parse.js";
import { seededRandom } from "../../extproc/policy/decide/random.js";
import { isResourceDocument, resourceFromObject, resourcesOf, type Resource } from "../../extproc/policy/documents/resources.js";
import type { Policy } from "../../extproc/policy/model/types.js";
import type { Decision } from "../../extproc/decision.js";
import type { KumaVersion } from "../../extproc/policy/model/kuma-version.js";

export interface YamlEngine {
  engine: PolicyEngine;
  /** Decides one described request (throws on a malformed description). */
  ask(request: Record<string, unknown>): Decision;
  /** Moves the fake clock on. */
  advance(ms: number): void;
}

/** Every document must be valid: a rejection throws, so a test never runs on a silently smaller set. */
export function yamlEngine(text: string, kumaVersion: KumaVersion = "2.14"): YamlEngine {
  const policies: Policy[] = [];
  const resources: Resource[] = [];
  let dataplaneDoc: unknown;
  for (const d of parseDocuments(text)) {
    if (d.violations) throw new Error(`document ${d.index}: ${JSON.stringify(d.violations)}`);
    const v = d.value as Record<string, unknown> | null;
    if (!v) continue;
    if (v.type === "Dataplane") dataplaneDoc = v;
    else if (isResourceDocument(v)) {
      const r = resourceFromObject(v);
      if (!r.resource) throw new Error(`document ${d.index}: ${JSON.stringify(r.violations)}`);
      resources.push(r.resource);
    } else {
      const r = validatePolicyObject(v, kumaVersion);
      if (!r.policy) throw new Error(`document ${d.index}: ${JSON.stringify(r.violations)}`);
      policies.push(r.policy);
    }
  }
  const dp = dataplaneFromObject(dataplaneDoc);
  if (!dp.dataplane) throw new Error(`bad Dataplane: ${JSON.stringify(dp.violations)}`);
  let nowMs = 1_000_000;
  const engine = new PolicyEngine({ dataplane: dp.dataplane, random: seededRandom(1), nowMs: () => nowMs, kumaVersion });
  engine.replace(policies, resourcesOf(resources));
  const mesh = dp.dataplane.mesh;
  return {
    engine,
    ask(request) {
      const { input, violations } = parseExplainInput(request, mesh);
      if (!input) throw new Error(`bad request: ${JSON.stringify(violations)}`);
      return engine.evaluate(input.facts, { identity: input.identity, inbound: input.inbound }).decision;
    },
    advance(ms) {
      nowMs += ms;
    },
  };
}

/** A sidecar Dataplane `orders-1` in mesh default with inbound `http` (port 8080, service orders). */
export const ORDERS_DATAPLANE = `
type: Dataplane
mesh: default
name: orders-1
labels: {app: orders}
networking:
  address: 10.0.0.7
  inbound:
    - {port: 8080, name: http, tags: {kuma.io/service: orders}}
`;

/** A Mesh `default` with mTLS on (builtin CA). */
export const MTLS_MESH = `
type: Mesh
name: default
mtls: {enabledBackend: ca-1, backends: [{name: ca-1, type: builtin}]}
`;
