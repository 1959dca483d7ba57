// Composition of the sidecar process: metrics registry, readiness, gRPC ext_proc + health server,
// admin HTTP server, and the current Decider. No signal handling here (see commands/sidecar.ts).
import { Registry } from "prom-client";
import { AdminServer } from "./admin/server.js";
import { registerBasicRoutes } from "./admin/routes.js";
import type { SidecarConfig } from "./config/sidecar.js";
import { ALLOW_ALL, type Decider } from "./decision.js";
import { startDecisionLog } from "./decision-log/recorder.js";
import type { DataplaneLifecycle } from "./dataplane-lifecycle.js";
import type { Logger } from "./log.js";
import { collectProcessMetrics } from "./process-metrics.js";
import { startPolicyPlane } from "./policy-plane.js";
import { Readiness } from "./readiness.js";
import { HealthService } from "./transport/health.js";
import { TransportMetrics } from "./transport/metrics.js";
import { ExtProcServer } from "./transport/server.js";

export interface Sidecar {
  readonly config: SidecarConfig;
  readonly log: Logger;
  readonly registry: Registry;
  readonly readiness: Readiness;
  readonly health: HealthService;
  readonly admin: AdminServer;
  /** Bound gRPC address (host:port), after port 0 resolution. */
  readonly grpcAddress: string;
  /** Bound admin address (host:port). */
  readonly adminAddress: string;
  /** The dataplane in the control plane (a no-op without --control-plane); the drain controller uses it. */
  readonly lifecycle: DataplaneLifecycle;
  /** Swaps the Decider used by new streams (streams in flight keep theirs). */
  setDecider(decider: Decider): void;
  /** Closes the servers: gRPC waits up to graceMs for streams in flight. */
  stop(graceMs?: number): Promise<void>;
}

export async function startSidecar(config: SidecarConfig, log: Logger): Promise<Sidecar> {
  const registry = new Registry();
  collectProcessMetrics(registry);
  const readiness = new Readiness();
  const health = new HealthService();
  readiness.onChange((ready) => health.setServing(ready));
  health.setServing(readiness.ready);

  let decider: Decider = ALLOW_ALL;
  const metrics = new TransportMetrics(registry);
  const decisionLog = await startDecisionLog(config, registry, log.child({ component: "decision-log" }));
  const grpc = new ExtProcServer(
    {
      decider: () => decider,
      settings: { messageTimeoutMs: config.messageTimeoutMs, maxMessageTimeoutMs: config.maxMessageTimeoutMs, explainHeader: config.explainHeader },
      metrics,
      log: log.child({ component: "extproc" }),
      decisionLog,
    },
    health,
    config.maxStreamsPerConnection,
  );
  const admin = new AdminServer(log.child({ component: "admin" }), { adminToken: config.adminToken });
  registerBasicRoutes(admin, registry, readiness);

  const policy = await startPolicyPlane(config, log, registry, readiness, admin);
  if (policy.engine) decider = policy.engine;

  const grpcAddress = await grpc.bind(config.grpcListen);
  if (config.grpcSocket) await grpc.bind(`unix:${config.grpcSocket}`);
  const adminInfo = await admin.listen(config.adminListen);
  const adminHost = adminInfo.family === "IPv6" ? `[${adminInfo.address}]` : adminInfo.address;
  const adminAddress = `${adminHost}:${adminInfo.port}`;

  let stopped: Promise<void> | undefined;
  return {
    config,
    log,
    registry,
    readiness,
    health,
    admin,
    grpcAddress,
    adminAddress,
    lifecycle: policy.lifecycle,
    setDecider(next) {
      decider = next;
    },
    stop(graceMs = 5000) {
      stopped ??= (async () => {
        health.closeWatchers();
        await Promise.all([grpc.shutdown(graceMs), admin.close(), policy.stop()]);
        await decisionLog?.close();
      })();
      return stopped;
    },
  };
}
