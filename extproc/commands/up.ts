// `meshext up` (what `npm start` runs): the embedded control plane seeded with the repo's sample policies, a sidecar
// pointed at it and, when an Envoy is installed, a real data plane in front of a demo app (up-data-plane.ts), in
// one process; prints where everything listens and how to try it.
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { CONTROL_PLANE_ENV_PREFIX, CONTROL_PLANE_FLAGS, type ControlPlaneConfig } from "../config/control-plane.js";
import { checkEnvoyConfig, type EnvoyConfig } from "../config/envoy.js";
import { ConfigError, type FlagSpec, formatHelp, pinnedKumaVersion, resolveConfig } from "../config/flags.js";
import { checkSidecarConfig, type SidecarConfig } from "../config/sidecar.js";
import { hasNoPolicies, seedFromDir } from "../control-plane/seed.js";
import { installDrain } from "../drain/install.js";
import { untilDrained } from "../drain/signals.js";
import { planEnvoy, startPlannedEnvoy } from "../envoy-run/launch.js";
import { createLogger } from "../log.js";
import { startSidecar } from "../sidecar.js";
import { startFromConfig } from "./control-plane.js";
import { RUN_FLAGS } from "./run.js";
import { banner, type BannerSamples, type DataPlaneBanner, SAMPLES_214, SAMPLES_30 } from "./up-banner.js";
import { minorOf, type KumaVersion } from "../policy/model/kuma-version.js";
import { demoEnvoyConfig, inboundPortOf, makeDemoCerts, missingForDataPlane, startDemoApp, type DemoApp } from "./up-data-plane.js";

export const UP_USAGE = "meshext up [control-plane flags] [-- sidecar and Envoy flags]";
export const UP_SUMMARY =
  "Starts the embedded control plane (seeded from envoy/policies/ when its data dir is empty; with --kuma-version 3.0, a preview, from " +
  "examples/kuma-3.0/ and its demo Dataplane), a sidecar that follows it and, " +
  "with an Envoy installed, a real Envoy with inbound mTLS in front of a demo app.";

export const UP_FLAGS = [
  ...CONTROL_PLANE_FLAGS,
  { key: "envoy", flag: "envoy", type: "enum", values: ["auto", "on", "off"], default: "auto", help: "The real data plane: auto runs it when an Envoy and openssl are there (else the sidecar alone, said in one line); on requires it; off never." },
] as const satisfies readonly FlagSpec[];

/** The repo's sample policies, wherever the command is run from. */
export const SAMPLE_POLICIES_DIR = fileURLToPath(new URL("../../../envoy/policies/", import.meta.url));

/** What `up` seeds and registers for a Kuma version whose policy YAML the 2.14 samples are not (3.0 rejects their `from`). */
interface Samples {
  policiesDir: string;
  banner: BannerSamples;
  /** The demo Dataplane (with the labels 3.0 selects by), used unless --dataplane-file is given. */
  dataplaneFile?: string;
}

const KUMA_30_SAMPLES_DIR = fileURLToPath(new URL("../../../examples/kuma-3.0/", import.meta.url));

export function samplesFor(version: KumaVersion | undefined): Samples {
  if (version && minorOf(version) === "3.0") return { policiesDir: KUMA_30_SAMPLES_DIR, banner: SAMPLES_30, dataplaneFile: join(KUMA_30_SAMPLES_DIR, "dataplane", "demo-app-1.yaml") };
  return { policiesDir: SAMPLE_POLICIES_DIR, banner: SAMPLES_214 };
}

/** Sidecar settings for `up`: pointed at our control plane, its data under .meshext/, a demo identity. */
export function upSidecarConfig<C extends SidecarConfig>(base: C, controlPlaneUrl: string, token: string, stateDir: string): C {
  return {
    ...base,
    policies: "",
    controlPlane: base.controlPlane || controlPlaneUrl,
    controlPlaneToken: base.controlPlaneToken || token,
    policyCacheFile: base.policyCacheFile || join(stateDir, "policy-cache.json"),
    dataplaneName: base.dataplaneName || "demo-app-1",
    dataplaneTags: base.dataplaneTags || "kuma.io/service=demo-app,kuma.io/protocol=http",
  };
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { config: upConfig, parsed } = resolveConfig(UP_FLAGS, argv, env, CONTROL_PLANE_ENV_PREFIX);
  if (parsed.help) {
    process.stdout.write(formatHelp(UP_USAGE, UP_SUMMARY, UP_FLAGS, CONTROL_PLANE_ENV_PREFIX));
    process.stdout.write("\nSidecar and Envoy flags (after --):\n\n" + formatHelp("meshext up -- [flags]", "", RUN_FLAGS));
    return 0;
  }
  const cpConfig: ControlPlaneConfig = upConfig;
  const kumaVersion = pinnedKumaVersion(cpConfig.kumaVersion);
  const samples = samplesFor(kumaVersion);
  const { config: runFlags } = resolveConfig(RUN_FLAGS, parsed.rest, env);
  // With a version's own demo Dataplane the sidecar is pinned to that version: it reads the file (3.0: inbounds
  // without tags) before it could ask the control plane which version it follows.
  const demoDataplane = !runFlags.dataplaneFile && samples.dataplaneFile;
  const sidecarFlags = demoDataplane ? { ...runFlags, kumaVersion: runFlags.kumaVersion || cpConfig.kumaVersion, dataplaneFile: samples.dataplaneFile } : runFlags;
  const base = checkEnvoyConfig(checkSidecarConfig(sidecarFlags as SidecarConfig & EnvoyConfig, undefined, true)) as SidecarConfig & EnvoyConfig;
  const log = createLogger(cpConfig.logLevel);
  const stateDir = join(cpConfig.dataDir, "..");

  const missing = upConfig.envoy === "off" ? "--envoy off" : missingForDataPlane(env);
  if (missing && upConfig.envoy === "on") throw new ConfigError(`--envoy on: ${missing}`);

  const cp = await startFromConfig(cpConfig, log);
  if (hasNoPolicies(cp.store)) await seedFromDir(cp.store, samples.policiesDir, log.child({ component: "seed" }), kumaVersion);
  let config = upSidecarConfig(base, cp.url, cpConfig.token, stateDir);

  let app: DemoApp | undefined;
  let sidecar: Awaited<ReturnType<typeof startSidecar>> | undefined;
  let plane: DataPlaneBanner | undefined;
  let stopEnvoy: (() => Promise<void>) | undefined;
  try {
    // The data plane is planned (and its bootstrap validated by Envoy) before the sidecar registers anything.
    let plan;
    let envoyConfig: EnvoyConfig | undefined;
    if (!missing) {
      const certs = makeDemoCerts(join(stateDir, "certs"));
      app = await startDemoApp(config.appPort);
      envoyConfig = demoEnvoyConfig(config, certs, app.port);
      config = { ...config, ...envoyConfig, drainListeners: true };
      plan = planEnvoy(config, envoyConfig, [], env);
      plane = { certs, inboundUrl: "", appPort: app.port, envoyAdmin: plan.adminUrl };
    }
    sidecar = await startSidecar(config, log);
    if (plan && envoyConfig && plane) {
      const started = startPlannedEnvoy(plan, { grpc: sidecar.grpcAddress, admin: sidecar.adminAddress }, config.envoyKillGraceMs, log.child({ component: "envoy" }));
      const adminUrl = await started.live;
      if (!adminUrl) throw new ConfigError("Envoy did not start (its log is above)");
      plane.envoyAdmin = adminUrl;
      plane.inboundUrl = `https://127.0.0.1:${await inboundPortOf(adminUrl, envoyConfig)}`;
      config = { ...config, envoyAdmin: adminUrl };
      stopEnvoy = async () => void (await started.child.stop());
      process.on("exit", () => started.child.killNow());
    }
    const drain = installDrain(sidecar, config, stopEnvoy ? { stopEnvoy } : undefined);
    process.stderr.write(banner(cp.url, sidecar.grpcAddress, sidecar.adminAddress, cpConfig.dataDir, config, plane, missing, samples.banner));
    const result = await untilDrained(drain);
    app?.stop();
    await cp.stop();
    if (result.forced) process.exit(result.exitCode);
    return result.exitCode;
  } catch (err) {
    await sidecar?.stop(0);
    app?.stop();
    await cp.stop();
    throw err;
  }
}
