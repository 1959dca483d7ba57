// `meshext bootstrap [run flags]`: prints the Envoy bootstrap `meshext run` would start Envoy on with the same flags
// (envoy/envoy.yaml and envoy/envoy-mtls.yaml are this command's output for the demo; a test keeps them so).
import { formatHelp } from "../config/flags.js";
import { BUILT_WASM_PATH, bootstrapRenderer } from "../envoy-run/launch.js";
import { loadRunConfig, RUN_FLAGS } from "./run.js";

export const BOOTSTRAP_USAGE = "meshext bootstrap [run flags]";
export const BOOTSTRAP_SUMMARY = "Prints the Envoy bootstrap that `meshext run` generates for the same flags (nothing is started).";

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { config, parsed } = loadRunConfig(argv, env);
  if (parsed.help) {
    process.stdout.write(formatHelp(BOOTSTRAP_USAGE, BOOTSTRAP_SUMMARY, RUN_FLAGS));
    return 0;
  }
  const render = bootstrapRenderer(config, config, config.wasmModule || BUILT_WASM_PATH, `meshext bootstrap ${argv.join(" ")}`.trim());
  process.stdout.write(render({ grpc: config.grpcListen, admin: config.adminListen }));
  return 0;
}
