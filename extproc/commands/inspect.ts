// `meshext inspect dataplane NAME [-m MESH] [-o table|yaml|json]`: the rules the control plane computes for one
// dataplane (`GET /meshes/{mesh}/dataplanes/{name}/_rules`) as a table: inbound, kind, for whom, conf, origin.
import { ConfigError } from "../config/flags.js";
import { commandArgs, OUTPUT_FLAG } from "../policy-tools/args.js";
import { render, table } from "../policy-tools/output.js";
import { CONTROL_PLANE_FLAGS, getJson, RestError } from "../policy-tools/rest-client.js";
import { RULES_HEADER, rulesRows } from "../policy-tools/rules-table.js";
import { MESH_FLAG } from "./get.js";

const FLAGS = [MESH_FLAG, OUTPUT_FLAG, ...CONTROL_PLANE_FLAGS] as const;
const USAGE = "meshext inspect dataplane NAME [-m MESH] [-o table|yaml|json] [--control-plane URL]";
const SUMMARY = "Shows the policy rules that apply to one dataplane, from the control plane's _rules view (Kuma's inspect API).";

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const args = commandArgs(FLAGS, argv, env, { usage: USAGE, summary: SUMMARY }, { short: { m: "mesh", o: "output" } });
  if (!args) return 0;
  const { config, positionals } = args;
  if (positionals.length !== 2 || positionals[0] !== "dataplane") throw new ConfigError(`expected: dataplane NAME\nUsage: ${USAGE}`);
  const name = positionals[1]!;
  let view: unknown;
  try {
    view = await getJson({ url: config.controlPlane, token: config.token }, `/meshes/${encodeURIComponent(config.mesh)}/dataplanes/${encodeURIComponent(name)}/_rules`);
  } catch (err) {
    if (!(err instanceof RestError)) throw err;
    process.stderr.write(`meshext inspect: dataplane ${config.mesh}/${name}: ${err.message}\n`);
    return 1;
  }
  const rows = rulesRows(view);
  process.stdout.write(render(config.output, view, () => (rows.length ? table(RULES_HEADER, rows) : `no policy rule applies to dataplane ${config.mesh}/${name}\n`)));
  return 0;
}
