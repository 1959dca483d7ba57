// `meshext run [sidecar flags] -- envoy -c envoy.yaml`: the sidecar plus Envoy as its child. Envoy
// gets SIGTERM only after the drain (SIGKILL after --envoy-kill-grace); we exit with Envoy's status.
import { ConfigError, formatHelp } from "../config/flags.js";
import { loadSidecarConfig, SIDECAR_FLAGS } from "../config/sidecar.js";
import { EnvoyChild, exitStatusOf } from "../drain/envoy-child.js";
import { installDrain } from "../drain/install.js";
import { untilDrained } from "../drain/signals.js";
import { createLogger } from "../log.js";
import { startSidecar } from "../sidecar.js";

export const RUN_USAGE = "meshext run [flags] -- envoy -c envoy.yaml [envoy flags]";
export const RUN_SUMMARY =
  "Runs the sidecar and starts Envoy as its child. On SIGTERM/SIGINT it drains first, then stops Envoy and exits with Envoy's status.";

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { config, parsed } = loadSidecarConfig(argv, env);
  if (parsed.help) {
    process.stdout.write(formatHelp(RUN_USAGE, RUN_SUMMARY, SIDECAR_FLAGS));
    return 0;
  }
  if (parsed.rest.length === 0) throw new ConfigError(`missing the Envoy command after --: ${RUN_USAGE}`);
  const log = createLogger(config.logLevel);
  // The sidecar first: Envoy's ext_proc filter needs it from its first request.
  const sidecar = await startSidecar(config, log);
  const envoy = EnvoyChild.start(parsed.rest, { killGraceMs: config.envoyKillGraceMs, log: log.child({ component: "envoy" }) });
  // We never leave Envoy behind, whatever way we exit.
  process.on("exit", () => envoy.killNow());

  const drain = installDrain(sidecar, config, { stopEnvoy: async () => void (await envoy.stop()) });
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
