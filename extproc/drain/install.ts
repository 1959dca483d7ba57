// Wires a DrainController into a running sidecar: effects on readiness, gRPC health, Envoy admin, the
// control plane and the servers; the /drain routes; the metrics. Installs no signal handlers.
import type { Registry } from "prom-client";
import type { AdminServer } from "../admin/server.js";
import type { SidecarConfig } from "../config/sidecar.js";
import { NO_CONTROL_PLANE, type DataplaneLifecycle } from "../dataplane-lifecycle.js";
import type { Logger } from "../log.js";
import { DrainController, type DrainClock, type DrainEffects } from "./controller.js";
import { EnvoyAdminClient } from "./envoy-admin.js";
import { registerDrainMetrics } from "./metrics.js";
import { registerDrainRoutes } from "./routes.js";
import { skipped } from "./types.js";

/** The parts of the sidecar the drain acts on (extproc/sidecar.ts's Sidecar fits). */
export interface DrainHost {
  readonly log: Logger;
  readonly registry: Registry;
  readonly readiness: { set(name: string, reasonNotReady: string | undefined): void };
  readonly health: { setServing(serving: boolean): void };
  readonly admin: Pick<AdminServer, "route">;
  /** The control-plane side of the lifecycle, when the sidecar has one. */
  readonly lifecycle?: DataplaneLifecycle;
  stop(graceMs?: number): Promise<void>;
}

export type DrainSettings = Pick<
  SidecarConfig,
  "envoyAdmin" | "inboundStatPrefix" | "drainMinMs" | "drainTimeMs" | "drainListeners" | "envoyKillGraceMs"
> & Partial<Pick<SidecarConfig, "exitOnSigterm">
>;

export interface InstallDrainOptions {
  /** Control-plane side of the lifecycle. @default host.lifecycle, else NO_CONTROL_PLANE */
  lifecycle?: DataplaneLifecycle;
  /** Stops the Envoy we started (`meshext run`); absent when someone else runs Envoy. */
  stopEnvoy?: () => Promise<void>;
  clock?: DrainClock;
  /** Bound on each Envoy admin / control-plane call, ms. @default 2000 */
  callTimeoutMs?: number;
  /** Time gRPC streams in flight get when the servers close, ms. @default 2000 */
  serverCloseGraceMs?: number;
}

export const READINESS_GATE = "draining";

const NO_ENVOY_ADMIN = skipped("no --envoy-admin");
const NO_CONTROL_PLANE_SKIP = skipped("no --control-plane");

export const SYSTEM_CLOCK: DrainClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export function installDrain(host: DrainHost, settings: DrainSettings, options: InstallDrainOptions = {}): DrainController {
  const log = host.log.child({ component: "drain" });
  const lifecycle = options.lifecycle ?? host.lifecycle ?? NO_CONTROL_PLANE;
  const callTimeoutMs = options.callTimeoutMs ?? 2000;
  const clock = options.clock ?? SYSTEM_CLOCK;
  let controller: DrainController | undefined;
  const metrics = registerDrainMetrics(host.registry, () => controller!.snapshot(), clock.now);
  const envoy = settings.envoyAdmin
    ? new EnvoyAdminClient({ baseUrl: settings.envoyAdmin, callTimeoutMs, onFailure: (call) => metrics.envoyAdminFailure(call) })
    : undefined;
  if (!envoy) log.warn({}, "no --envoy-admin: Envoy will not be told to drain, and the drain waits the full --drain-time");

  let statMissingLogged = false;
  const effects: DrainEffects = {
    setReady: () => host.readiness.set(READINESS_GATE, "draining"),
    setHealthNotServing: () => host.health.setServing(false),
    failEnvoyHealthchecks: async () => (envoy ? envoy.failHealthchecks() : NO_ENVOY_ADMIN),
    drainListeners: async () => (envoy ? envoy.drainListeners() : NO_ENVOY_ADMIN),
    drainListenersForever: async () => (envoy ? envoy.drainListenersForever() : NO_ENVOY_ADMIN),
    markDraining: async () => (lifecycle === NO_CONTROL_PLANE ? NO_CONTROL_PLANE_SKIP : lifecycle.markDraining()),
    readInflight: async () => {
      if (!envoy) return undefined;
      const n = await envoy.downstreamRequestsActive(settings.inboundStatPrefix);
      if (n === undefined && !statMissingLogged) {
        statMissingLogged = true;
        log.warn(
          { stat: `http.${settings.inboundStatPrefix}.downstream_rq_active` },
          "Envoy does not report this stat: check --inbound-stat-prefix; the drain waits the full --drain-time",
        );
      }
      return n;
    },
    deregister: async () => (lifecycle === NO_CONTROL_PLANE ? NO_CONTROL_PLANE_SKIP : lifecycle.deregister()),
    stopEnvoy: async () => (options.stopEnvoy ? options.stopEnvoy() : skipped("Envoy is not our child (meshext run starts it)")),
    // Our child: stop it as usual. Someone else's (a classic pod's Envoy container): ask it to exit.
    quitEnvoy: async () => (options.stopEnvoy ? options.stopEnvoy() : envoy ? envoy.quit() : NO_ENVOY_ADMIN),
    closeServers: () => host.stop(options.serverCloseGraceMs ?? 2000),
  };
  controller = new DrainController(
    effects,
    {
      drainMinMs: settings.drainMinMs,
      drainTimeMs: settings.drainTimeMs,
      drainListeners: settings.drainListeners,
      callTimeoutMs,
      stopTimeoutMs: settings.envoyKillGraceMs + 5000,
      exitOnSignal: settings.exitOnSigterm ?? false,
    },
    clock,
    log,
  );
  // /drain/wait never holds a caller past the longest drain plus the exit steps.
  registerDrainRoutes(host.admin, controller, settings.drainTimeMs + callTimeoutMs + settings.envoyKillGraceMs + 5000);
  return controller;
}
