// `meshext control-plane`: run the embedded control plane (Kuma REST API for policies and dataplanes) until a signal.
import { CONTROL_PLANE_ENV_PREFIX, CONTROL_PLANE_FLAGS, type ControlPlaneConfig, listensOnLoopbackOnly, loadControlPlaneConfig } from "../config/control-plane.js";
import { ConfigError, formatHelp, pinnedKumaVersion } from "../config/flags.js";
import { startControlPlane, type RunningControlPlane } from "../control-plane/server.js";
import { previewNote } from "../kuma-rest/kuma-version.js";
import { createLogger, type Logger } from "../log.js";

export const CONTROL_PLANE_USAGE = "meshext control-plane [flags]";
export const CONTROL_PLANE_SUMMARY =
  "Serves the Kuma REST API shape for Mesh, MeshTrafficPermission, MeshFaultInjection, MeshRateLimit, MeshHTTPRoute, MeshService, MeshExternalService, MeshMultiZoneService and Dataplane (plus Kuma's inspect endpoints), stored durably under --data-dir.";

/** Starts the control plane from a resolved config; refuses a non-loopback listener without a token. */
export async function startFromConfig(config: ControlPlaneConfig, log: Logger): Promise<RunningControlPlane> {
  if (!config.token && !(await listensOnLoopbackOnly(config.listen))) {
    throw new ConfigError(`--listen ${config.listen} is not a loopback address: set --token so that writes need it`);
  }
  const kumaVersion = pinnedKumaVersion(config.kumaVersion);
  const preview = kumaVersion && previewNote(kumaVersion);
  if (preview) log.warn({ kumaVersion, preview: true }, preview);
  return startControlPlane(
    {
      listen: config.listen,
      dataDir: config.dataDir,
      token: config.token,
      offlineTimeoutMs: config.offlineTimeoutMs,
      offlineGcAgeMs: config.offlineGcAgeMs,
      limits: { maxBodyBytes: config.maxBodyBytes },
      kumaVersion,
      decisionSamples: { perDataplane: config.decisionSamplesPerDataplane, maxBytes: config.decisionSamplesMaxBytes },
    },
    log.child({ component: "control-plane" }),
  );
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { config, parsed } = loadControlPlaneConfig(argv, env);
  if (parsed.help) {
    process.stdout.write(formatHelp(CONTROL_PLANE_USAGE, CONTROL_PLANE_SUMMARY, CONTROL_PLANE_FLAGS, CONTROL_PLANE_ENV_PREFIX));
    return 0;
  }
  const log = createLogger(config.logLevel);
  const cp = await startFromConfig(config, log);
  log.info({ url: cp.url, dataDir: config.dataDir, writesNeedToken: Boolean(config.token) }, "control plane listening");
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  log.info("control plane stopping");
  await cp.stop();
  return 0;
}
