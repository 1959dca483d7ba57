// `meshext explain [METHOD] PATH [--spiffe-id ID | --tags k=v,… | --xfcc V] [-H 'name: value'…] [--outbound]`: asks a
// running sidecar (`POST /explain` on its admin port) how it decides the described request, and shows the answer.
import { ConfigError } from "../config/flags.js";
import { commandArgs, OUTPUT_FLAG } from "../policy-tools/args.js";
import { explainText } from "../policy-tools/explain-text.js";
import { render } from "../policy-tools/output.js";
import { errorText, requestJson, RestError } from "../policy-tools/rest-client.js";

const FLAGS = [
  { key: "admin", flag: "admin", type: "url", default: "http://127.0.0.1:9902", help: "The sidecar's admin URL (its --admin-listen)." },
  { key: "adminToken", flag: "admin-token", type: "string", default: "", help: "Bearer token for a non-loopback --admin (the sidecar's --admin-token)." },
  { key: "outbound", flag: "outbound", type: "bool", default: false, help: "Explain an outbound request (to --authority) instead of an inbound one." },
  { key: "authority", flag: "authority", type: "string", default: "", help: "The :authority (for outbound: the destination, e.g. payments or payments:80)." },
  { key: "spiffeId", flag: "spiffe-id", type: "string", default: "", help: "The client's SPIFFE ID (its certificate's URI SAN)." },
  { key: "tags", flag: "tags", type: "string", default: "", help: "The client's tags, k=v,k=v (e.g. kuma.io/service=web)." },
  { key: "xfcc", flag: "xfcc", type: "string", default: "", help: "An x-forwarded-client-cert value, as Envoy would pass it." },
  { key: "sni", flag: "sni", type: "string", default: "", help: "The TLS SNI the client sent." },
  { key: "inbound", flag: "inbound", type: "string", default: "", help: "The inbound (name or port) to decide for; default: as the sidecar picks it." },
  { key: "header", flag: "header", type: "string", default: "", help: "A request header 'name: value' (-H; several may follow)." },
  OUTPUT_FLAG,
] as const;
const USAGE = "meshext explain [METHOD] PATH [--spiffe-id ID | --tags k=v,… | --xfcc V] [-H 'name: value'…] [--outbound --authority HOST] [flags]";
const SUMMARY = "Describes a request to a running sidecar (POST /explain) and shows its decision, the deciding policy and why, the client and inbound it saw, and the policies that selected it. Nothing is enforced or counted.";

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const args = commandArgs(FLAGS, argv, env, { usage: USAGE, summary: SUMMARY }, { short: { o: "output", H: "header" }, multi: ["header"] });
  if (!args) return 0;
  const { config, positionals, lists } = args;
  if (positionals.length < 1 || positionals.length > 2) throw new ConfigError(`expected [METHOD] PATH\nUsage: ${USAGE}`);
  const [method, path] = positionals.length === 2 ? positionals : ["GET", positionals[0]!];
  const headers: Record<string, string> = {};
  for (const h of lists.header ?? []) {
    const colon = h.indexOf(":", 1);
    if (colon <= 0) throw new ConfigError(`--header: ${JSON.stringify(h)} is not 'name: value'`);
    headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
  }
  const client: Record<string, unknown> = {};
  if (config.spiffeId) client.spiffeID = config.spiffeId;
  if (config.xfcc) client.xfcc = config.xfcc;
  if (config.sni) client.sni = config.sni;
  if (config.tags) client.tags = tagsOf(config.tags);
  const body = {
    direction: config.outbound ? "outbound" : "inbound",
    method: method!.toUpperCase(),
    path,
    ...(config.authority ? { authority: config.authority } : {}),
    ...(Object.keys(headers).length ? { headers } : {}),
    ...(Object.keys(client).length ? { client } : {}),
    ...(config.inbound ? { inbound: config.inbound } : {}),
  };
  try {
    const reply = await requestJson({ url: config.admin, token: config.adminToken }, "POST", "/explain", JSON.stringify(body));
    if (reply.status !== 200) throw new RestError(`POST /explain: ${reply.status} ${errorText(reply.body)}`);
    process.stdout.write(render(config.output, reply.body, () => explainText(reply.body)));
    return 0;
  } catch (err) {
    if (!(err instanceof RestError)) throw err;
    process.stderr.write(`meshext explain: ${err.message}\n`);
    return 1;
  }
}

function tagsOf(text: string): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const part of text.split(",").map((s) => s.trim()).filter(Boolean)) {
    const eq = part.indexOf("=");
    if (eq <= 0) throw new ConfigError(`--tags: "${part}" is not key=value`);
    tags[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return tags;
}
