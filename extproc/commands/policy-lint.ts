// `meshext policy lint PATH…`: every violation (file, document index, field path, message) and warning of policy
// files and directories, read by the engine's own parser; exit 0 clean, 1 violations, 2 usage.
import { ConfigError, pinnedKumaVersion } from "../config/flags.js";
import { commandArgs, KUMA_VERSION_FLAG, OUTPUT_FLAG } from "../policy-tools/args.js";
import { lintReport, lintText } from "../policy-tools/lint.js";
import { loadPolicies } from "../policy-tools/load.js";
import { render } from "../policy-tools/output.js";

const FLAGS = [OUTPUT_FLAG, KUMA_VERSION_FLAG] as const;
const USAGE = "meshext policy lint PATH… [--output table|json|yaml] [--kuma-version V]";
const SUMMARY =
  "Validates policy files and directories (*.yaml, *.yml, *.json) exactly as the sidecar's --policies source and the\n" +
  "control plane do, and lists every violation (file, document index, field path, message) and every warning\n" +
  "(deprecated fields, MeshHTTPRoute header edits Envoy would drop, a policy defined twice). Exit 0: clean; 1: violations; 2: usage.";

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const args = commandArgs(FLAGS, argv, env, { usage: USAGE, summary: SUMMARY }, { short: { o: "output" } });
  if (!args) return 0;
  const { config, positionals } = args;
  if (positionals.length === 0) throw new ConfigError(`no PATH given\nUsage: ${USAGE}`);
  const report = lintReport(await loadPolicies(positionals, pinnedKumaVersion(config.kumaVersion)));
  process.stdout.write(render(config.output, report, () => lintText(report)));
  return report.errors.length > 0 ? 1 : 0;
}
