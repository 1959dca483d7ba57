// `meshext run [flags] [-- [envoy] [envoy flags]]`: the sidecar plus Envoy as its child, as kuma-dp runs it: Envoy
// starts on a bootstrap generated from the flags and the Dataplane (validated by Envoy first), unless the command
// after -- brings its own (-c). Envoy gets SIGTERM only after the drain, once its inbound listeners stopped and its
// requests in flight ended (SIGKILL after --envoy-kill-grace); we exit with Envoy's status.
import { checkEnvoyConfig, ENVOY_FLAGS, type EnvoyConfig } from "../config/envoy.js";
import { formatHelp, resolveConfig } from "../config/flags.js";
import { checkSidecarConfig, SIDECAR_FLAGS, type SidecarConfig } from "../config/sidecar.js";
import { exitStatusOf } from "../drain/envoy-child.js";
import { EnvoyAdminClient } from "../drain/envoy-admin.js";
import { installDrain } from "../drain/install.js";
import { untilDrained } from "../drain/signals.js";
import { planEnvoy, startPlannedEnvoy } from "../envoy-run/launch.js";
import { QUIESCE_BUDGET_MS, quiesceEnvoy } from "../envoy-run/quiesce.js";
import { createLogger } from "../log.js";
import { startSidecar } from "../sidecar.js";

export const RUN_USAGE = "meshext run [flags] [-- [envoy binary] [envoy flags]]";
export const RUN_SUMMARY =
  "Runs the sidecar and starts Envoy as its child, on a bootstrap generated from these flags and the Dataplane (Envoy validates it first; " +
  "`-- envoy -c FILE` runs your own instead). On SIGTERM/SIGINT it drains first, then stops Envoy and exits with Envoy's status.";

export const RUN_FLAGS = [...SIDECAR_FLAGS, ...ENVOY_FLAGS] as const;

/** The sidecar and Envoy settings of `meshext run`, checked. */
export function loadRunConfig(argv: readonly string[], env: NodeJS.ProcessEnv) {
  const { config, parsed } = resolveConfig(RUN_FLAGS, argv, env);
  return { config: checkEnvoyConfig(checkSidecarConfig(config as SidecarConfig & EnvoyConfig)) as SidecarConfig & EnvoyConfig, parsed };
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { config: flags, parsed } = loadRunConfig(argv, env);
  if (parsed.help) {
    process.stdout.write(formatHelp(RUN_USAGE, RUN_SUMMARY, RUN_FLAGS));
    return 0;
  }
  const log = createLogger(flags.logLevel);
  // The sidecar first: its own start-up input (policies, dataplane, decision log) is checked there, and Envoy's
  // ext_proc filter needs it from its first request. Then, before Envoy starts: the binary exists and Envoy accepts
  // the bootstrap; if not, the sidecar stops (deregistering) and we exit 2.
  const sidecar = await startSidecar(flags, log);
  let plan;
  try {
    plan = planEnvoy(flags, flags, parsed.rest, env);
  } catch (err) {
    await sidecar.stop(0);
    throw err;
  }
  const started = startPlannedEnvoy(plan, { grpc: sidecar.grpcAddress, admin: sidecar.adminAddress }, flags.envoyKillGraceMs, log.child({ component: "envoy" }));
  const envoy = started.child;
  // An admin on port 0 has an address only once Envoy wrote it: the drain needs it.
  const adminUrl = plan.bootstrapPath && /:0$/.test(plan.adminUrl) ? ((await started.live) ?? "") : plan.adminUrl;
  const config: SidecarConfig = { ...flags, envoyAdmin: flags.envoyAdmin || adminUrl };
  // We never leave Envoy behind, whatever way we exit.
  process.on("exit", () => envoy.killNow());

  // Stopping Envoy: its inbound listeners stop accepting and its requests in flight end first (envoy-run/quiesce.ts).
  const envoyLog = log.child({ component: "envoy" });
  const envoyAdmin = config.envoyAdmin ? new EnvoyAdminClient({ baseUrl: config.envoyAdmin, callTimeoutMs: QUIESCE_BUDGET_MS }) : undefined;
  const stopEnvoy = async () => {
    if (envoyAdmin && envoy.running) envoyLog.info(await quiesceEnvoy(envoyAdmin, config.inboundStatPrefix), "envoy quiesced: inbound listeners stopped, stopping it");
    await envoy.stop();
  };
  const drain = installDrain(sidecar, config, { stopEnvoy });
  void envoy.exited.then((exit) => {
    if (drain.phase === "exiting" || drain.phase === "done") return;
    // Envoy died on its own (while serving or draining): nothing left to drain, deregister and leave with its status.
    log.warn({ status: exitStatusOf(exit) }, "envoy exited while serving: leaving");
    void drain.start("envoy exited");
    drain.hurry("envoy exited");
  });
  // Signal handlers are in place before "listening" is logged, so whoever reads that line may signal us.
  const drained = untilDrained(drain);
  log.info({ grpc: sidecar.grpcAddress, admin: sidecar.adminAddress }, "listening");
  const result = await drained;
  if (result.forced) {
    envoy.killNow();
    process.exit(result.exitCode);
  }
  return exitStatusOf(await envoy.exited);
}
