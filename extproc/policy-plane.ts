// Wires per-request policy decisions into the sidecar: who this dataplane is, the PolicyEngine,
// its policy source (--policies DIR or --control-plane URL), the dataplane lifecycle client,
// the "policies" readiness gate, and POST /explain. Only policies that can select this dataplane are kept
// (policy/selection/select.ts); a change of the dataplane's own labels/tags (--dataplane-file) re-selects them.
import { accessSync, constants, statSync } from "node:fs";
import { Gauge, type Registry } from "prom-client";
import type { AdminServer } from "./admin/server.js";
import { json } from "./admin/server.js";
import type { SidecarConfig } from "./config/sidecar.js";
import { NO_CONTROL_PLANE, type DataplaneLifecycle } from "./dataplane-lifecycle.js";
import type { Logger } from "./log.js";
import { PolicyEngine } from "./policy/decide/engine.js";
import type { Dataplane } from "./policy/documents/dataplane.js";
import { explainHandler } from "./policy/views/explain-route.js";
import { selectForDataplane } from "./policy/selection/select.js";
import type { MeshResources } from "./policy/documents/resources.js";
import type { Rejected } from "./policy/documents/parse.js";
import type { Policy } from "./policy/model/types.js";
import { watchDataplaneFile } from "./policy-source/dataplane-file-watch.js";
import { DirPolicySource } from "./policy-source/dir-source.js";
import { dataplaneClientFromConfig, httpPolicySourceFromConfig, localDataplane } from "./policy-source/from-config.js";
import { inspectRules } from "./policy/views/inspect-rules.js";
import { PLACEHOLDER_INBOUND_PORT } from "./policy-source/dataplane-client.js";
import type { ApplyPolicies, PolicySource } from "./policy-source/source.js";
import { resolveKumaVersion, type ResolvedKumaVersion } from "./policy-source/version-detect.js";
import type { Readiness } from "./readiness.js";
import { ConfigError, pinnedKumaVersion } from "./config/flags.js";
import { DEFAULT_KUMA_VERSION, previewNote } from "./kuma-rest/kuma-version.js";

export interface PolicyPlane {
  /** The Kuma release the engine's semantics follow, and how it was chosen (known once start() has resolved it). */
  readonly kumaVersion?: ResolvedKumaVersion;
  /** Undefined when no policy source is configured (every request is then allowed). */
  engine?: PolicyEngine;
  /** The policy source, created by start() once the Kuma version is known. */
  readonly source?: PolicySource;
  lifecycle: DataplaneLifecycle;
  /**
   * Loads the first set and registers the dataplane. A policy directory is read before this resolves; a
   * control plane (its version detection included) is followed in the background, since it may be slow or
   * silent: until a set is loaded the engine answers per --before-first-sync, so the ports can be bound first.
   */
  start(): Promise<void>;
  /** Rejects with a ConfigError when the control plane turns out to be unusable (an unsupported Kuma version). */
  readonly failed: Promise<never>;
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

/** meshext_dataplane_info: who this sidecar is, for dashboard variables (mesh, namespace, dataplane) and joins. */
function dataplaneInfo(registry: Registry, dp: Dataplane): void {
  const info = new Gauge({ name: "meshext_dataplane_info", help: "This sidecar's dataplane (value 1): its mesh, name and Kubernetes namespace (the k8s.kuma.io/namespace label or tag; empty outside Kubernetes).", labelNames: ["mesh", "dataplane", "namespace"], registers: [registry] });
  const namespace = dp.labels?.["k8s.kuma.io/namespace"] ?? dp.inbounds.map((i) => i.tags["k8s.kuma.io/namespace"]).find((n) => n !== undefined) ?? "";
  info.set({ mesh: dp.mesh, dataplane: dp.name, namespace }, 1);
}

/** --policies must name a directory this process can list and read at start: anything else is exit 2, in one line. */
function checkPolicyDir(dir: string): void {
  try {
    if (!statSync(dir).isDirectory()) throw new ConfigError(`--policies: ${dir} is not a directory`);
    accessSync(dir, constants.R_OK | constants.X_OK);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    const e = err as NodeJS.ErrnoException;
    const why = e.code === "ENOENT" ? "no such directory" : e.code === "EACCES" ? "permission denied" : e.message;
    throw new ConfigError(`--policies: cannot read ${dir}: ${why}`);
  }
}

/** Why a first directory load was held back, for /ready: how many documents, and the first one's violations. */
function firstLoadRefusal(rejected: readonly Rejected[]): string {
  const first = rejected[0]!;
  const what = [first.source, first.kind && first.name ? `${first.kind} ${first.name}` : `document ${first.index + 1}`].filter(Boolean).join(": ");
  const violations = first.violations.map((v) => `${v.field}: ${v.message}`).join("; ");
  return `${rejected.length} policy document(s) rejected at the first load (${what}: ${violations}); nothing applied until they are fixed, or start with --allow-invalid-policies`;
}

const NEVER: Promise<never> = new Promise<never>(() => {});

/** Builds the engine and the /explain route; nothing is loaded or contacted until start(). */
export function createPolicyPlane(config: SidecarConfig, log: Logger, registry: Registry, readiness: Readiness, admin: AdminServer): PolicyPlane {
  const policyLog = log.child({ component: "policy" });
  if (!config.policies && !config.controlPlane) {
    policyLog.warn("no policy source (--policies or --control-plane): every request is allowed");
    admin.route("POST", "/explain", () => json(409, { error: "no policy source configured (--policies or --control-plane)" }));
    return { lifecycle: NO_CONTROL_PLANE, failed: NEVER, start: async () => {}, stop: async () => {} };
  }
  if (config.policies) checkPolicyDir(config.policies);
  const local = localDataplane(config);
  dataplaneInfo(registry, local.dataplane);
  const engine = new PolicyEngine({
    dataplane: local.dataplane,
    trustKumaTagsHeader: config.trustKumaTagsHeader,
    beforeFirstSync: config.beforeFirstSync,
    // Until start() has detected the control plane's version, nothing is compiled: the pin or the default.
    kumaVersion: pinnedKumaVersion(config.kumaVersion) ?? DEFAULT_KUMA_VERSION,
    log: policyLog,
    audit: config.decisionLog !== "" || config.decisionLogPush,
  });
  const versionInfo = new Gauge({
    name: "meshext_policy_kuma_version_info",
    help: "The Kuma release whose policy semantics the sidecar follows (value 1); `from` is flag, control-plane or default.",
    labelNames: ["version", "from"],
    registers: [registry],
  });
  readiness.set("policies", "no policy set loaded yet");
  const counts = selectionGauges(registry);
  const version = new Gauge({ name: "meshext_policy_set_version", help: "Version of the policy set in force (one more for each set applied, from either source); 0 before the first.", registers: [registry] });
  const apply: ApplyPolicies = (policies: Policy[], origin: string, resources?: MeshResources, total?: number) => {
    const selection = selectForDataplane(policies, engine.dataplane, engine.kumaVersion);
    const result = engine.replace(selection.kept, resources, { kept: selection.kept.length, total: total ?? selection.total });
    if (result.ok) {
      version.set(result.version);
      readiness.set("policies", undefined);
      counts.kept.set(selection.kept.length);
      counts.total.set(result.selection!.total);
      policyLog.info({ origin, version: result.version, policies: result.policies, total: result.selection!.total }, "policy set in force");
      for (const d of result.droppedEdits ?? []) {
        policyLog.warn({ origin, ...d }, "MeshHTTPRoute header edit that Envoy drops (ext_proc mutation_rules in envoy/envoy.yaml); it does not apply");
      }
    }
  };
  let source: PolicySource | undefined;
  let kuma: ResolvedKumaVersion | undefined;
  const explain = explainHandler(engine, () => source?.rejected ?? []);
  admin.route("POST", "/explain", (req) => {
    const reply = explain(req.body);
    return json(reply.status, withKumaRules(reply, engine));
  });
  const dataplaneClient = dataplaneClientFromConfig(config, local, log);
  const lifecycle = dataplaneClient ?? NO_CONTROL_PLANE;
  const registeredResource = dataplaneClient ? () => dataplaneClient.resource() : undefined;
  let reportFailure: (err: unknown) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    reportFailure = reject;
  });
  failed.catch(() => {}); // observed by whoever awaits it; never an unhandled rejection
  let following: Promise<void> | undefined;
  let stopped = false;
  const reselect = async (dp: Dataplane) => {
    engine.setDataplane(dp);
    await source?.resync();
    const snap = engine.current();
    // The source could not deliver a set (control plane down): compile what is held for the new dataplane.
    if (snap && snap.dataplane !== dp) apply(snap.policies, "re-selection of the held set", snap.resources, engine.selectionCounts()?.total);
  };
  let unwatch = () => {};
  return {
    get kumaVersion() {
      return kuma;
    },
    engine,
    get source() {
      return source;
    },
    lifecycle,
    failed,
    async start() {
      following = (async () => {
        kuma = await resolveKumaVersion(config);
        if (kuma.warning) policyLog.warn({ kumaVersion: kuma.version }, kuma.warning);
        const preview = previewNote(kuma.version);
        if (preview) policyLog.warn({ kumaVersion: kuma.version, preview: true }, preview);
        policyLog.info({ kumaVersion: kuma.version, from: kuma.from, reported: kuma.reported }, "policy semantics follow Kuma " + kuma.version);
        versionInfo.set({ version: kuma.version, from: kuma.from }, 1);
        engine.followKumaVersion(kuma.version);
        if (stopped) return;
        source = config.policies
          ? new DirPolicySource({
              dir: config.policies,
              apply,
              log: policyLog,
              selectFor: () => engine.dataplane,
              kumaVersion: kuma.version,
              registry,
              requireValidFirstLoad: !config.allowInvalidPolicies,
              onFirstLoadRefused: (rejected) => readiness.set("policies", firstLoadRefusal(rejected)),
            })
          : httpPolicySourceFromConfig(config, apply, log, registry, kuma.version, () => engine.dataplane, registeredResource)!;
        await source.start();
        if (stopped) return;
        if (config.dataplaneFile) {
          unwatch = watchDataplaneFile({ file: config.dataplaneFile, intervalMs: config.dataplaneFileCheckMs, current: local.dataplane, onChange: reselect, log: policyLog, kumaVersion: pinnedKumaVersion(config.kumaVersion) });
        }
        await lifecycle.register();
      })().catch((err: unknown) => {
        if (err instanceof ConfigError) reportFailure(err);
        else policyLog.error({ err }, "policy source failed to start");
      });
      if (!config.controlPlane) await following;
    },
    async stop() {
      stopped = true;
      unwatch();
      await source?.stop();
      await following;
    },
  };
}

/** How many policies the source delivered and how many can select this dataplane (and are compiled). */
function selectionGauges(registry: Registry): { kept: Gauge; total: Gauge } {
  const registers = [registry];
  return {
    kept: new Gauge({ name: "meshext_policies_kept", help: "Policies in force that can select this dataplane (the others are dropped at load).", registers }),
    total: new Gauge({ name: "meshext_policies_in_source", help: "Valid policies in the source's current set, before keeping those that select this dataplane.", registers }),
  };
}
