// Wires per-request policy decisions into the sidecar: who this dataplane is, the PolicyEngine,
// its policy source (--policies DIR or --control-plane URL), the dataplane lifecycle client,
// the "policies" readiness gate, and POST /explain.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import type { Registry } from "prom-client";
import type { AdminServer } from "./admin/server.js";
import { json } from "./admin/server.js";
import { ConfigError } from "./config/flags.js";
import type { SidecarConfig } from "./config/sidecar.js";
import { NO_CONTROL_PLANE, type DataplaneLifecycle } from "./dataplane-lifecycle.js";
import type { Logger } from "./log.js";
import { dataplaneFromTags, dataplaneFromText, SERVICE_TAG, type Dataplane } from "./policy/dataplane.js";
import { PolicyEngine } from "./policy/engine.js";
import { explainHandler } from "./policy/explain-route.js";
import type { Policy } from "./policy/types.js";
import { DirPolicySource } from "./policy-source/dir-source.js";
import { dataplaneClientFromConfig, httpPolicySourceFromConfig } from "./policy-source/from-config.js";
import type { PolicySource } from "./policy-source/source.js";
import type { Readiness } from "./readiness.js";

export interface PolicyPlane {
  /** Undefined when no policy source is configured (every request is then allowed). */
  engine?: PolicyEngine;
  source?: PolicySource;
  lifecycle: DataplaneLifecycle;
  stop(): Promise<void>;
}

/** This sidecar's Dataplane from --dataplane-file, else --mesh/--dataplane-tags (service defaults to the name). */
export function localDataplane(config: SidecarConfig): Dataplane {
  const name = config.dataplaneName || hostname();
  let result;
  if (config.dataplaneFile) {
    let text: string;
    try {
      text = readFileSync(config.dataplaneFile, "utf8");
    } catch (err) {
      throw new ConfigError(`--dataplane-file: cannot read ${config.dataplaneFile}: ${(err as Error).message}`);
    }
    result = dataplaneFromText(text);
  } else {
    const tags = config.dataplaneTags.includes(`${SERVICE_TAG}=`) ? config.dataplaneTags : [`${SERVICE_TAG}=${name}`, config.dataplaneTags].filter(Boolean).join(",");
    result = dataplaneFromTags(config.mesh, tags, name);
  }
  if (!result.dataplane) {
    const where = config.dataplaneFile ? `--dataplane-file ${config.dataplaneFile}` : "--dataplane-tags";
    throw new ConfigError(`${where}: ${result.violations.map((v) => `${v.field}: ${v.message}`).join("; ")}`);
  }
  return result.dataplane;
}

export async function startPolicyPlane(config: SidecarConfig, log: Logger, registry: Registry, readiness: Readiness, admin: AdminServer): Promise<PolicyPlane> {
  const policyLog = log.child({ component: "policy" });
  if (!config.policies && !config.controlPlane) {
    policyLog.warn("no policy source (--policies or --control-plane): every request is allowed");
    admin.route("POST", "/explain", () => json(409, { error: "no policy source configured (--policies or --control-plane)" }));
    return { lifecycle: NO_CONTROL_PLANE, stop: async () => {} };
  }
  const engine = new PolicyEngine({
    dataplane: localDataplane(config),
    trustKumaTagsHeader: config.trustKumaTagsHeader,
    beforeFirstSync: config.beforeFirstSync,
    log: policyLog,
  });
  const explain = explainHandler(engine);
  admin.route("POST", "/explain", (req) => {
    const reply = explain(req.body);
    return json(reply.status, reply.body);
  });

  readiness.set("policies", "no policy set loaded yet");
  const apply = (policies: Policy[], origin: string) => {
    const result = engine.replace(policies);
    if (result.ok) {
      readiness.set("policies", undefined);
      policyLog.info({ origin, version: result.version, policies: result.policies }, "policy set in force");
    }
  };
  const source: PolicySource = config.policies
    ? new DirPolicySource({ dir: config.policies, apply, log: policyLog })
    : httpPolicySourceFromConfig(config, apply, log, registry)!;
  const lifecycle = dataplaneClientFromConfig(config, log) ?? NO_CONTROL_PLANE;
  await source.start();
  await lifecycle.register();
  return {
    engine,
    source,
    lifecycle,
    stop: () => source.stop(),
  };
}
