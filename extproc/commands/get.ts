// `meshext get policies|dataplanes|<type plural> [-m MESH] [-o table|yaml|json]`: lists resources of a mesh from
// the control plane's REST API, as kumactl get does (a table by default).
import { ConfigError } from "../config/flags.js";
import { DATAPLANE_TYPE, IDENTITY_TYPES, POLICY_TYPES, SERVICE_TYPES } from "../kuma-rest/resources.js";
import { commandArgs, OUTPUT_FLAG } from "../policy-tools/args.js";
import { render, table } from "../policy-tools/output.js";
import { DATAPLANE_HEADER, dataplaneRow, POLICY_HEADER, policyRow } from "../policy-tools/resource-rows.js";
import { CONTROL_PLANE_FLAGS, listAll, RestError } from "../policy-tools/rest-client.js";

export const MESH_FLAG = { key: "mesh", flag: "mesh", type: "string", default: "default", help: "Mesh (-m)." } as const;
const FLAGS = [MESH_FLAG, OUTPUT_FLAG, ...CONTROL_PLANE_FLAGS] as const;
const KINDS = ["policies", "dataplanes", ...POLICY_TYPES.map((t) => t.plural), ...SERVICE_TYPES.map((t) => t.plural), ...IDENTITY_TYPES.map((t) => t.plural)];
const USAGE = `meshext get ${"policies|dataplanes|<type>"} [-m MESH] [-o table|yaml|json] [--control-plane URL]`;
const SUMMARY = `Lists a mesh's resources from the control plane's REST API. <type> is one of: ${KINDS.slice(2).join(", ")}.`;

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const args = commandArgs(FLAGS, argv, env, { usage: USAGE, summary: SUMMARY }, { short: { m: "mesh", o: "output" } });
  if (!args) return 0;
  const { config, positionals } = args;
  const what = positionals[0];
  if (positionals.length !== 1 || !KINDS.includes(what!)) throw new ConfigError(`${what === undefined ? "say what to get" : `cannot get ${JSON.stringify(positionals.join(" "))}`}: one of ${KINDS.join(", ")}\nUsage: ${USAGE}`);
  const target = { url: config.controlPlane, token: config.token };
  const mesh = encodeURIComponent(config.mesh);
  const types = what === "policies" ? POLICY_TYPES : what === "dataplanes" ? [DATAPLANE_TYPE] : [...POLICY_TYPES, ...SERVICE_TYPES, ...IDENTITY_TYPES].filter((t) => t.plural === what);
  const items: unknown[] = [];
  try {
    for (const t of types) items.push(...(await listAll(target, `/meshes/${mesh}/${t.plural}`)));
  } catch (err) {
    if (!(err instanceof RestError)) throw err;
    process.stderr.write(`meshext get: ${err.message}\n`);
    return 1;
  }
  const now = Date.now();
  const text = () => (items.length === 0 ? `no ${what} in mesh ${config.mesh}\n` : what === "dataplanes" ? table(DATAPLANE_HEADER, items.map((r) => dataplaneRow(r, now))) : table(POLICY_HEADER, items.map((r) => policyRow(r, now))));
  process.stdout.write(render(config.output, { total: items.length, items }, text));
  return 0;
}
