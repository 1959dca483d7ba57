// An /explain report (policy/views/explain.ts ExplainReport, or the same JSON from a sidecar) as readable lines.
import type { Obj } from "../policy/documents/issues.js";

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export function explainText(report: unknown, indent = ""): string {
  if (!isObj(report)) return `${indent}(no explanation)\n`;
  const lines: string[] = [];
  const d = isObj(report.decision) ? report.decision : {};
  const e = isObj(d.explain) ? d.explain : {};
  const verdict = d.type === "respond" ? `${e.action} (local reply ${d.status})` : String(e.action ?? "allow");
  const by = e.policy ? ` by ${e.kind} ${e.policy}${e.rule ? " " + e.rule : ""}` : "";
  lines.push(`decision: ${verdict}${by}${typeof d.delayMs === "number" && d.delayMs > 0 ? `, delayed ${d.delayMs}ms` : ""}`);
  lines.push(`reason:   ${e.reason ?? ""}`);
  if (isObj(report.inbound)) lines.push(`inbound:  ${report.inbound.name} ${tagsText(report.inbound.tags)}`);
  if (report.destination) lines.push(`destination: ${report.destination}`);
  if (isObj(report.client)) lines.push(`client:   ${tagsText(report.client.tags)} (from ${report.client.source})`);
  const edits = (label: string, h: unknown) => {
    if (!isObj(h)) return;
    for (const op of ["set", "add"]) for (const pair of (h[op] as unknown[] | undefined) ?? []) if (Array.isArray(pair)) lines.push(`${label} ${op} ${pair[0]}: ${pair[1]}`);
    for (const name of (h.remove as unknown[] | undefined) ?? []) lines.push(`${label} remove ${name}`);
  };
  edits("request header", d.requestHeaders);
  edits("response header", d.responseHeaders);
  const policies = Array.isArray(report.policies) ? report.policies.filter(isObj) : [];
  if (policies.length > 0) lines.push("policies selecting this dataplane:");
  for (const p of policies) lines.push(`  ${p.contributed ? "*" : " "} ${p.kind} ${p.name}${p.ignored ? ` (ignored: ${p.ignored})` : p.contributed ? "" : " (no rule for this request)"}`);
  if (Array.isArray(report.notApplied) && report.notApplied.length) lines.push(`not applied by ext_proc: ${report.notApplied.join(", ")}`);
  if (Array.isArray(report.rejected) && report.rejected.length) lines.push(`rejected documents at the sidecar: ${report.rejected.length}`);
  return lines.map((l) => indent + l).join("\n") + "\n";
}

function tagsText(tags: unknown): string {
  if (!isObj(tags)) return "";
  const parts = Object.entries(tags).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join("|") : String(v)}`);
  return parts.length ? parts.join(",") : "(no tags)";
}
