// `meshext policy what-if --decision-log FILE… --policies PATH… --dataplane FILE…`: replays every recorded
// decision against a candidate policy set and reports each one that would change. Exit 0 (1 with
// --fail-on-change when one would), 1 when the candidate set has invalid documents, 2 on usage or unreadable input.
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { ConfigError, pinnedKumaVersion } from "../config/flags.js";
import { commandArgs, KUMA_VERSION_FLAG, OUTPUT_FLAG } from "../policy-tools/args.js";
import { findingLine, lintReport } from "../policy-tools/lint.js";
import { loadPolicies, policySet } from "../policy-tools/load.js";
import { render } from "../policy-tools/output.js";
import { dataplanesFrom, readDataplanes } from "../policy-tools/read-dataplanes.js";
import { DEFAULT_WHAT_IF_EXAMPLES, Replayer } from "../policy-tools/replay.js";
import { whatIfText } from "../policy-tools/what-if-text.js";

const FLAGS = [
  { key: "decisionLog", flag: "decision-log", type: "path", default: "", help: "Decision-log file(s) written by the sidecar's --decision-log (several: oldest first, e.g. log.1 log)." },
  { key: "policies", flag: "policies", type: "path", default: "", help: "The candidate policy set: files and directories (all of the mesh's policies, as the sidecar would load them)." },
  { key: "dataplane", flag: "dataplane", type: "path", default: "", help: "File(s) with the Dataplane documents of the dataplanes the log's records name." },
  { key: "controlPlane", flag: "control-plane", type: "url", default: "", help: "Instead of --dataplane: take every Dataplane from this control plane's REST API (GET /dataplanes)." },
  { key: "token", flag: "token", type: "string", default: "", help: "Bearer token for --control-plane." },
  { key: "examples", flag: "examples", type: "int", default: DEFAULT_WHAT_IF_EXAMPLES, min: 0, help: "How many changed decisions to show in full (the first ones)." },
  { key: "failOnChange", flag: "fail-on-change", type: "bool", default: false, help: "Exit 1 when any decision would change (for CI)." },
  OUTPUT_FLAG,
  KUMA_VERSION_FLAG,
] as const;
const USAGE = "meshext policy what-if --decision-log FILE… --policies PATH… (--dataplane FILE… | --control-plane URL) [flags]";
const SUMMARY =
  "Decides every recorded decision again with the candidate policies, for the dataplane each record names, and reports\n" +
  "each decision that would change (before/after outcome and deciding policy), the count per change class, and a\n" +
  "one-line summary. Malformed lines and records that cannot be replayed are counted and skipped.";

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const multi = ["decision-log", "policies", "dataplane"];
  const args = commandArgs(FLAGS, argv, env, { usage: USAGE, summary: SUMMARY }, { short: { o: "output" }, multi });
  if (!args) return 0;
  const { config, positionals, lists } = args;
  if (positionals.length > 0) throw new ConfigError(`unexpected argument ${JSON.stringify(positionals[0])}\nUsage: ${USAGE}`);
  if (!lists.decisionLog?.length) throw new ConfigError(`--decision-log is required\nUsage: ${USAGE}`);
  if (!lists.policies?.length) throw new ConfigError(`--policies is required\nUsage: ${USAGE}`);
  if (!lists.dataplane?.length === !config.controlPlane) throw new ConfigError(`give either --dataplane FILE… or --control-plane URL\nUsage: ${USAGE}`);
  const kumaVersion = pinnedKumaVersion(config.kumaVersion);
  const { dataplanes, problems } = lists.dataplane?.length ? await readDataplanes(lists.dataplane) : await dataplanesFrom({ url: config.controlPlane, token: config.token });
  if (problems.length > 0) throw new ConfigError(problems.join("\n"));
  const loaded = await loadPolicies(lists.policies!, kumaVersion);
  const lint = lintReport(loaded);
  if (loaded.unreadable.length > 0) throw new ConfigError(lint.errors.map((e) => `--policies: ${findingLine(e)}`).join("\n"));
  if (lint.errors.length > 0) {
    process.stderr.write(lint.errors.map((e) => `error: ${findingLine(e)}\n`).join("") + "meshext policy what-if: the candidate set has invalid documents (see meshext policy lint); nothing replayed\n");
    return 1;
  }
  const { policies, resources } = policySet(loaded);
  const replayer = new Replayer({ dataplanes, policies, resources, kumaVersion, examples: config.examples });
  for (const file of lists.decisionLog!) await replayFile(file, replayer);
  const report = replayer.result();
  process.stdout.write(render(config.output, report, () => whatIfText(report)));
  return config.failOnChange && report.changed > 0 ? 1 : 0;
}

async function replayFile(file: string, replayer: Replayer): Promise<void> {
  const stream = createReadStream(file, { encoding: "utf8" });
  const opened = new Promise<void>((resolve, reject) => {
    stream.once("open", () => resolve());
    stream.once("error", reject);
  });
  await opened.catch((err: Error) => {
    throw new ConfigError(`--decision-log: cannot read ${file}: ${err.message}`);
  });
  let lineNo = 0;
  try {
    for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) replayer.line(line, ++lineNo);
  } catch (err) {
    throw new ConfigError(`--decision-log: reading ${file} failed at line ${lineNo + 1}: ${(err as Error).message}`);
  }
}
