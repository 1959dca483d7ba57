// `policy lint`'s findings from loaded files: every rejected document's violations (errors), and warnings for
// what loads but may not do what it says: Kuma deprecations, MeshHTTPRoute header edits Envoy would drop
// (decide/route-drops.ts), and a policy defined twice (the later one replaces the earlier, as in the sidecar).
import { describeDropped } from "../envoy-mutation-rules.js";
import { routeEditDrops } from "../policy/decide/route-drops.js";
import { policyKey } from "../policy/model/types.js";
import type { Loaded } from "./load.js";

export interface Finding {
  file: string;
  /** Document index in the file (0-based, as the sidecar logs it); absent for a file that could not be read. */
  index?: number;
  kind?: string;
  name?: string;
  field: string;
  message: string;
}

export interface LintReport {
  files: number;
  policies: number;
  errors: Finding[];
  warnings: Finding[];
}

export function lintReport(loaded: Loaded): LintReport {
  const errors: Finding[] = loaded.unreadable.map((u) => ({ file: u.path, field: "file", message: `cannot read: ${u.error}` }));
  const warnings: Finding[] = [];
  const seen = new Map<string, string>();
  let policies = 0;
  for (const f of loaded.files) {
    for (const r of f.rejected) {
      for (const v of r.violations) errors.push({ file: f.path, index: r.index, ...(r.kind ? { kind: r.kind } : {}), ...(r.name ? { name: r.name } : {}), field: v.field, message: v.message });
    }
    policies += f.policies.length;
    for (const p of f.policies) {
      for (const w of p.warnings) warnings.push({ file: f.path, kind: p.type, name: p.name, field: w.field, message: `deprecated: ${w.message}` });
      const key = policyKey(p);
      const earlier = seen.get(key);
      if (earlier !== undefined) warnings.push({ file: f.path, kind: p.type, name: p.name, field: "name", message: `${key} is also defined in ${earlier}: this later one replaces it` });
      seen.set(key, f.path);
    }
    for (const d of routeEditDrops(f.policies)) {
      warnings.push({ file: f.path, kind: "MeshHTTPRoute", name: d.policy, field: `spec.${d.rule}`, message: `Envoy drops this ${d.phase} header edit (ext_proc mutation_rules): ${describeDropped([d])}` });
    }
  }
  return { files: loaded.files.length, policies, errors, warnings };
}

/** One readable line per finding. */
export function findingLine(f: Finding): string {
  const where = f.index === undefined ? f.file : `${f.file}: document ${f.index}`;
  const what = f.kind || f.name ? ` (${[f.kind, f.name].filter(Boolean).join(" ")})` : "";
  return `${where}${what}: ${f.field ? f.field + ": " : ""}${f.message}`;
}

export function lintText(report: LintReport): string {
  const lines = [...report.errors.map((f) => `error: ${findingLine(f)}`), ...report.warnings.map((f) => `warning: ${findingLine(f)}`)];
  lines.push(`${report.files} file(s), ${report.policies} valid polic${report.policies === 1 ? "y" : "ies"}, ${report.errors.length} violation(s), ${report.warnings.length} warning(s)`);
  return lines.join("\n") + "\n";
}
