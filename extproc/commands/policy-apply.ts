// `meshext policy apply PATH… [--dry-run]`: PUTs every policy of the files to the control plane (universal form,
// as `meshext up` seeds them); with --dry-run the control plane validates without storing (`?dryRun=true`), says
// which dataplanes each policy would select, and what-if of their pushed decision samples. Invalid documents stop it
// before anything is sent (exit 1).
import { ConfigError, pinnedKumaVersion } from "../config/flags.js";
import { POLICY_TYPES } from "../kuma-rest/resources.js";
import { commandArgs, KUMA_VERSION_FLAG, OUTPUT_FLAG } from "../policy-tools/args.js";
import { findingLine, lintReport } from "../policy-tools/lint.js";
import { loadPolicies } from "../policy-tools/load.js";
import { render } from "../policy-tools/output.js";
import { DEFAULT_WHAT_IF_EXAMPLES, type WhatIfReport } from "../policy-tools/replay.js";
import { whatIfText } from "../policy-tools/what-if-text.js";
import { CONTROL_PLANE_FLAGS, errorText, requestJson, RestError } from "../policy-tools/rest-client.js";

const FLAGS = [
  { key: "dryRun", flag: "dry-run", type: "bool", default: false, help: "Validate on the control plane, list the dataplanes each policy would select, and replay the decision samples their sidecars pushed (--decision-log-push) against it; store nothing." },
  { key: "examples", flag: "examples", type: "int", default: DEFAULT_WHAT_IF_EXAMPLES, min: 0, help: "With --dry-run: how many changed decisions to show in full per dataplane (the first ones)." },
  { key: "failOnChange", flag: "fail-on-change", type: "bool", default: false, help: "With --dry-run: exit 1 when any replayed decision would change (for CI)." },
  OUTPUT_FLAG,
  KUMA_VERSION_FLAG,
  ...CONTROL_PLANE_FLAGS,
] as const;
const USAGE = "meshext policy apply PATH… [--dry-run [--examples N] [--fail-on-change]] [--control-plane URL] [--token T]";
const SUMMARY =
  "Writes the policies of files and directories to the control plane (PUT /meshes/{mesh}/{type}/{name}). With --dry-run, nothing is\n" +
  "stored: each policy is validated, the dataplanes it would select are listed, and for each of them whose sidecar pushes decision\n" +
  "samples, the what-if of those samples against the mesh's policies with this one in place.";

interface Applied {
  kind: string;
  mesh: string;
  name: string;
  ok: boolean;
  status?: number;
  created?: boolean;
  warnings?: string[];
  dataplanes?: string[];
  /** Dry run: per dataplane the policy (or the version it replaces) selects, the replay of its pushed samples. */
  whatIf?: DataplaneWhatIf[];
  error?: string;
}

/** One dataplane's entry of a dry run's `whatIf` (control-plane/dry-run-what-if.ts). */
interface DataplaneWhatIf {
  mesh: string;
  name: string;
  selectedBy: string[];
  samples: number;
  summary: string;
  report?: WhatIfReport;
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const args = commandArgs(FLAGS, argv, env, { usage: USAGE, summary: SUMMARY }, { short: { o: "output" } });
  if (!args) return 0;
  const { config, positionals } = args;
  if (positionals.length === 0) throw new ConfigError(`no PATH given\nUsage: ${USAGE}`);
  const loaded = await loadPolicies(positionals, pinnedKumaVersion(config.kumaVersion));
  const lint = lintReport(loaded);
  if (lint.errors.length > 0) {
    process.stderr.write(lint.errors.map((e) => `error: ${findingLine(e)}\n`).join("") + "meshext policy apply: invalid documents (see meshext policy lint); nothing applied\n");
    return 1;
  }
  const target = { url: config.controlPlane, token: config.token };
  const results: Applied[] = [];
  for (const p of loaded.files.flatMap((f) => f.policies)) {
    const type = POLICY_TYPES.find((t) => t.kind === p.type)!;
    const resource = { type: p.type, mesh: p.mesh, name: p.name, ...(Object.keys(p.labels).length ? { labels: p.labels } : {}), spec: p.spec };
    const path = `/meshes/${encodeURIComponent(p.mesh)}/${type.plural}/${encodeURIComponent(p.name)}${config.dryRun ? `?dryRun=true&examples=${config.examples}` : ""}`;
    const base = { kind: p.type, mesh: p.mesh, name: p.name };
    try {
      const reply = await requestJson(target, "PUT", path, JSON.stringify(resource));
      const body = (reply.body ?? {}) as { created?: boolean; warnings?: string[]; dataplanes?: { items?: Array<{ name: string }> }; whatIf?: { dataplanes?: DataplaneWhatIf[] } };
      if (reply.status >= 300) results.push({ ...base, ok: false, status: reply.status, error: errorText(reply.body) });
      else results.push({ ...base, ok: true, status: reply.status, created: config.dryRun ? body.created : reply.status === 201, warnings: body.warnings ?? [], ...(body.dataplanes ? { dataplanes: (body.dataplanes.items ?? []).map((d) => d.name) } : {}), ...(body.whatIf?.dataplanes ? { whatIf: body.whatIf.dataplanes } : {}) });
    } catch (err) {
      if (!(err instanceof RestError)) throw err;
      results.push({ ...base, ok: false, error: err.message });
    }
  }
  process.stdout.write(render(config.output, { dryRun: config.dryRun, results }, () => applyText(results, config.dryRun)));
  const changed = results.some((r) => (r.whatIf ?? []).some((w) => (w.report?.changed ?? 0) > 0));
  return results.every((r) => r.ok) && !(config.failOnChange && changed) ? 0 : 1;
}

/** A dataplane's what-if under its policy: the summary, then (with samples) the report as `meshext policy what-if` prints it. */
function whatIfLines(w: DataplaneWhatIf): string {
  const head = `\n  what-if on ${w.name}${w.selectedBy.includes("candidate") ? "" : " (selected by the stored version only)"}: ${w.samples ? `${w.samples} sample(s) held` : w.summary}`;
  if (!w.report) return head;
  const report = { ...w.report, malformedExamples: [] };
  return head + "\n" + whatIfText(report).trimEnd().split("\n").map((l) => "    " + l).join("\n");
}

function applyText(results: readonly Applied[], dryRun: boolean): string {
  const lines = results.map((r) => {
    const id = `${r.kind} ${r.mesh}/${r.name}`;
    if (!r.ok) return `${id}: refused${r.status ? ` (${r.status})` : ""}: ${r.error}`;
    const verb = dryRun ? (r.created ? "valid, would be created" : "valid, would be updated") : r.created ? "created" : "updated";
    const selects = r.dataplanes ? `; selects ${r.dataplanes.length} dataplane(s)${r.dataplanes.length ? ": " + r.dataplanes.join(", ") : ""}` : "";
    return `${id}: ${verb}${selects}${(r.warnings ?? []).map((w) => `\n  warning: ${w}`).join("")}${(r.whatIf ?? []).map(whatIfLines).join("")}`;
  });
  const failed = results.filter((r) => !r.ok).length;
  lines.push(`${results.length - failed} of ${results.length} polic${results.length === 1 ? "y" : "ies"} ${dryRun ? "valid (dry run: nothing stored)" : "applied"}${failed ? `, ${failed} refused` : ""}`);
  return lines.join("\n") + "\n";
}
