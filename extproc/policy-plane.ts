// Wires per-request policy decisions into the sidecar: who this dataplane is, the PolicyEngine,
// its policy source (--policies DIR or --control-plane URL), the dataplane lifecycle client,
// the "policies" readiness gate, and POST /explain.
import type { Registry } from "prom-client";
import type { AdminServer } from "./admin/server.js";
import { json } from "./admin/server.js";
import type { SidecarConfig } from "./config/sidecar.js";
import { NO_CONTROL_PLANE, type DataplaneLifecycle } from "./dataplane-lifecycle.js";
import type { Logger } from "./log.js";
import { PolicyEngine } from "./policy/engine.js";
import { explainHandler } from "./policy/explain-route.js";
import type { Policy } from "./policy/types.js";
import { DirPolicySource } from "./policy-source/dir-source.js";
import { dataplaneClientFromConfig, httpPolicySourceFromConfig, localDataplane } from "./policy-source/from-config.js";
import type { PolicySource } from "./policy-source/source.js";
import type { Readiness } from "./readiness.js";

export interface PolicyPlane {
  /** Undefined when no policy source is configured (every request is then allowed). */
  engine?: PolicyEngine;
  source?: PolicySource;
  lifecycle: DataplaneLifecycle;
  /**
   * Loads the first set and registers the dataplane. A policy directory is read before this resolves; a
   * control plane is followed in the background (it may be slow or silent): until a set is loaded the engine
   * answers per --before-first-sync, so the ports can be bound before this is called.
   */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Builds the engine, its source and the /explain route; nothing is loaded or contacted until start(). */
export function createPolicyPlane(config: SidecarConfig, log: Logger, registry: Registry, readiness: Readiness, admin: AdminServer): PolicyPlane {
  const policyLog = log.child({ component: "policy" });
  if (!config.policies && !config.controlPlane) {
    policyLog.warn("no policy source (--policies or --control-plane): every request is allowed");
    admin.route("POST", "/explain", () => json(409, { error: "no policy source configured (--policies or --control-plane)" }));
    return { lifecycle: NO_CONTROL_PLANE, start: async () => {}, stop: async () => {} };
  }
  const local = localDataplane(config);
  const engine = new PolicyEngine({
    dataplane: local.dataplane,
    trustKumaTagsHeader: config.trustKumaTagsHeader,
    beforeFirstSync: config.beforeFirstSync,
    log: policyLog,
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
  const explain = explainHandler(engine, () => source.rejected);
  admin.route("POST", "/explain", (req) => {
    const reply = explain(req.body);
    return json(reply.status, reply.body);
  });
  const lifecycle = dataplaneClientFromConfig(config, local, log) ?? NO_CONTROL_PLANE;
  let following: Promise<void> | undefined;
  let stopped = false;
  return {
    engine,
    source,
    lifecycle,
    async start() {
      following = (async () => {
        await source.start();
        if (!stopped) await lifecycle.register();
      })().catch((err: unknown) => policyLog.error({ err }, "policy source failed to start"));
      if (!config.controlPlane) await following;
    },
    async stop() {
      stopped = true;
      await source.stop();
      await following;
    },
  };
}
