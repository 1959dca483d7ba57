// `meshext sidecar`: parse flags, start the sidecar, log where it listens, stop on signals.
import { formatHelp } from "../config/flags.js";
import { loadSidecarConfig, SIDECAR_FLAGS } from "../config/sidecar.js";
import { installDrain } from "../drain/install.js";
import { untilDrained } from "../drain/signals.js";
import { createLogger } from "../log.js";
import { startSidecar } from "../sidecar.js";

export const SIDECAR_USAGE = "meshext sidecar [flags]";
export const SIDECAR_SUMMARY = "Runs the ext_proc policy service (gRPC) and the admin endpoints next to an Envoy.";

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { config, parsed } = loadSidecarConfig(argv, env);
  if (parsed.help) {
    process.stdout.write(formatHelp(SIDECAR_USAGE, SIDECAR_SUMMARY, SIDECAR_FLAGS));
    return 0;
  }
  const log = createLogger(config.logLevel);
  const sidecar = await startSidecar(config, log);
  // Signals drive the drain (docs/drain.md): the first drains, the second hurries, the third exits.
  // Installed before "listening" is logged, so whoever reads that line may signal us.
  const drain = installDrain(sidecar, config);
  const drained = untilDrained(drain);
  log.info({ grpc: sidecar.grpcAddress, admin: sidecar.adminAddress }, "listening");
  // A control plane found unusable after the ports opened (an unsupported Kuma version) ends the process: exit 2.
  const unusable = sidecar.failed.catch(async (err: unknown) => {
    await sidecar.stop(0);
    throw err;
  });
  const result = await Promise.race([drained, unusable]);
  if (result.forced) process.exit(result.exitCode);
  return result.exitCode;
}
