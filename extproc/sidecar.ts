// Composition of the sidecar process: metrics registry, readiness, gRPC ext_proc + health server,
// admin HTTP server, and the current Decider. No signal handling here (see commands/sidecar.ts).
import type { AddressInfo } from "node:net";
import { Registry } from "prom-client";
import { AdminServer } from "./admin/server.js";
import { registerBasicRoutes } from "./admin/routes.js";
import { ConfigError } from "./config/flags.js";
import type { SidecarConfig } from "./config/sidecar.js";
import { ALLOW_ALL, type Decider } from "./decision.js";
import { startDecisionLog } from "./decision-log/recorder.js";
import type { DataplaneLifecycle } from "./dataplane-lifecycle.js";
import { readProcessSample, startIdleTrim } from "./idle-trim.js";
import type { Logger } from "./log.js";
import { collectProcessMetrics } from "./process-metrics.js";
import { createPolicyPlane } from "./policy-plane.js";
import { startProbeServer, type ProbeServer } from "./probes/server.js";
import { parseProbeList } from "./probes/virtual-path.js";
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
  /** Rejects with a ConfigError when the policy source turns out to be unusable (e.g. an unsupported Kuma version). */
  readonly failed: Promise<never>;
  /** Swaps the Decider used by new streams (streams in flight keep theirs). */
  setDecider(decider: Decider): void;
  /** Closes the servers: gRPC waits up to graceMs for streams in flight. */
  stop(graceMs?: number): Promise<void>;
}

/** Why a listen failed, for the errors an operator can act on. */
const LISTEN_FAILURES: Readonly<Record<string, string>> = {
  EADDRINUSE: "the address is already in use",
  EACCES: "permission denied",
  EADDRNOTAVAIL: "no such address on this host",
  ENOENT: "the directory does not exist",
};

/** A port or socket the sidecar cannot listen on is a configuration error naming its flag, in one line. */
async function listening<T>(flag: string, address: string, listen: Promise<T>): Promise<T> {
  try {
    return await listen;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "";
    throw new ConfigError(`flag --${flag}: cannot listen on ${address}: ${LISTEN_FAILURES[code] ?? (error as Error).message}`);
  }
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

  const policy = createPolicyPlane(config, log, registry, readiness, admin);
  if (policy.engine) decider = policy.engine;
  const engine = policy.engine;
  if (engine) decisionLog?.setDataplane(() => engine.dataplane);

  // Ports first: until a policy set is loaded the engine answers per --before-first-sync, and a slow or
  // silent control plane must not leave Envoy facing a closed port.
  let grpcAddress: string;
  let adminInfo: AddressInfo;
  let probes: ProbeServer | undefined;
  try {
    grpcAddress = await listening("grpc-listen", config.grpcListen, grpc.bind(config.grpcListen));
    if (config.grpcSocket) await listening("grpc-socket", config.grpcSocket, grpc.bind(`unix:${config.grpcSocket}`));
    adminInfo = await listening("admin-listen", config.adminListen, admin.listen(config.adminListen));
    if (config.probeListen) {
      const list = parseProbeList(config.appProbes);
      const paths = list.ok ? list.paths : new Map();
      const probeLog = log.child({ component: "probes" });
      probes = await listening("probe-listen", config.probeListen, startProbeServer(config.probeListen, { probes: paths, appHost: config.dataplaneAddress, log: probeLog, registry }));
    }
  } catch (error) {
    // Whatever did bind must not keep the process alive: the command exits with the error.
    await Promise.all([grpc.shutdown(0), admin.close(), probes?.close()]);
    throw error;
  }
  await policy.start();
  // A policy set applied since the last check keeps the sidecar from counting as idle (each set bumps the version).
  const idleTrim = startIdleTrim({ registry, log: log.child({ component: "runtime" }), read: () => ({ ...readProcessSample(), workDone: engine?.current()?.version ?? 0 }) });
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
    failed: policy.failed,
    setDecider(next) {
      decider = next;
    },
    stop(graceMs = 5000) {
      stopped ??= (async () => {
        health.closeWatchers();
        idleTrim.stop();
        await Promise.all([grpc.shutdown(graceMs), admin.close(), policy.stop(), probes?.close()]);
        await decisionLog?.close();
      })();
      return stopped;
    },
  };
}
