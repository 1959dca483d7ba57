// Wires per-request policy decisions into the sidecar: who this dataplane is, the PolicyEngine,
// its policy source (--policies DIR or --control-plane URL), the dataplane lifecycle client,
// the "policies" readiness gate, and POST /explain.
import { Gauge, type Registry } from "prom-client";
import type { AdminServer } from "./admin/server.js";
import { json } from "./admin/server.js";
import type { SidecarConfig } from "./config/sidecar.js";
import { NO_CONTROL_PLANE, type DataplaneLifecycle } from "./dataplane-lifecycle.js";
import type { Logger } from "./log.js";
import { PolicyEngine } from "./policy/engine.js";
import { explainHandler } from "./policy/explain-route.js";
import type { MeshResources } from "./policy/resources.js";
import type { Policy } from "./policy/types.js";
import { DirPolicySource } from "./policy-source/dir-source.js";
import { dataplaneClientFromConfig, httpPolicySourceFromConfig, localDataplane } from "./policy-source/from-config.js";
import { inspectRules } from "./kuma-rest/inspect-rules.js";
import { PLACEHOLDER_INBOUND_PORT } from "./policy-source/dataplane-client.js";
import type { ApplyPolicies, PolicySource } from "./policy-source/source.js";
import { resolveKumaVersion, type ResolvedKumaVersion } from "./policy-source/version-detect.js";
import type { Readiness } from "./readiness.js";

export interface PolicyPlane {
  /** The Kuma release the engine's semantics follow, and how it was chosen. */
  kumaVersion?: ResolvedKumaVersion;
  /** Undefined when no policy source is configured (every request is then allowed). */
  engine?: PolicyEngine;
  source?: PolicySource;
  lifecycle: DataplaneLifecycle;
  stop(): Promise<void>;
}

/**
 * An /explain answer whose `dataplaneRules` is this dataplane's rule view exactly as Kuma's
 * `GET /meshes/{mesh}/dataplanes/{name}/_rules` (and the embedded control plane) answers it.
 */
function withKumaRules(reply: { status: number; body: unknown }, engine: PolicyEngine): unknown {
  const snapshot = engine.current();
  if (reply.status !== 200 || !snapshot || typeof reply.body !== "object" || reply.body === null) return reply.body;
  const { policies, dataplane, kumaVersion, resources } = snapshot;
  // Ports as registered: a dataplane described by --dataplane-tags registers the placeholder port.
  return { ...reply.body, dataplaneRules: inspectRules(policies, dataplane, { kumaVersion, resources }, PLACEHOLDER_INBOUND_PORT) };
}

export async function startPolicyPlane(config: SidecarConfig, log: Logger, registry: Registry, readiness: Readiness, admin: AdminServer): Promise<PolicyPlane> {
  const policyLog = log.child({ component: "policy" });
  if (!config.policies && !config.controlPlane) {
    policyLog.warn("no policy source (--policies or --control-plane): every request is allowed");
    admin.route("POST", "/explain", () => json(409, { error: "no policy source configured (--policies or --control-plane)" }));
    return { lifecycle: NO_CONTROL_PLANE, stop: async () => {} };
  }
  const local = localDataplane(config);
  const kuma = await resolveKumaVersion(config);
  if (kuma.warning) policyLog.warn({ kumaVersion: kuma.version }, kuma.warning);
  policyLog.info({ kumaVersion: kuma.version, from: kuma.from, reported: kuma.reported }, "policy semantics follow Kuma " + kuma.version);
  new Gauge({
    name: "meshext_policy_kuma_version_info",
    help: "The Kuma release whose policy semantics the sidecar follows (value 1); `from` is flag, control-plane or default.",
    labelNames: ["version", "from"],
    registers: [registry],
  }).set({ version: kuma.version, from: kuma.from }, 1);
  const engine = new PolicyEngine({
    dataplane: local.dataplane,
    trustKumaTagsHeader: config.trustKumaTagsHeader,
    beforeFirstSync: config.beforeFirstSync,
    kumaVersion: kuma.version,
    log: policyLog,
    audit: config.decisionLog !== "",
  });
  const explain = explainHandler(engine);
  admin.route("POST", "/explain", (req) => {
    const reply = explain(req.body);
    return json(reply.status, withKumaRules(reply, engine));
  });

  readiness.set("policies", "no policy set loaded yet");
  const version = new Gauge({ name: "meshext_policy_set_version", help: "Version of the policy set in force (one more for each set applied, from either source); 0 before the first.", registers: [registry] });
  const apply: ApplyPolicies = (policies: Policy[], origin: string, resources?: MeshResources) => {
    const result = engine.replace(policies, resources);
    if (result.ok) {
      version.set(result.version);
      readiness.set("policies", undefined);
      policyLog.info({ origin, version: result.version, policies: result.policies }, "policy set in force");
      for (const d of result.droppedEdits ?? []) {
        policyLog.warn({ origin, ...d }, "MeshHTTPRoute header edit that Envoy drops (ext_proc mutation_rules in envoy/envoy.yaml); it does not apply");
      }
    }
  };
  const source: PolicySource = config.policies
    ? new DirPolicySource({ dir: config.policies, apply, log: policyLog, kumaVersion: kuma.version })
    : httpPolicySourceFromConfig(config, apply, log, registry, kuma.version)!;
  const lifecycle = dataplaneClientFromConfig(config, local, log) ?? NO_CONTROL_PLANE;
  await source.start();
  await lifecycle.register();
  return {
    kumaVersion: kuma,
    engine,
    source,
    lifecycle,
    stop: () => source.stop(),
  };
}
