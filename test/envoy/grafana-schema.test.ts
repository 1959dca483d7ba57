// envoy/grafana/dashboards/meshext.json against Grafana's published dashboard schema: @grafana/schema ships it
// as TypeScript types (no JSON Schema), so the dashboard is type-checked as a literal with `satisfies Dashboard`
// (excess properties, wrong types and unknown enum values are errors), beside a deliberately broken copy that must fail.
import test from "ava";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { DASHBOARD_JSON, ROOT } from "./envoy-config.js";

/* eslint-disable @typescript-eslint/no-explicit-any */

const tscPath = createRequire(import.meta.url).resolve("typescript/bin/tsc");

/**
 * A module whose only content is the dashboard as a literal checked against Grafana's Dashboard type, read as JSON
 * holds it: the schema's string enums (ThresholdsMode, MappingType…) stand for their string values.
 */
const checked = (dashboard: unknown): string =>
  [
    `import type { Dashboard } from "@grafana/schema";`,
    "type AsJson<T> = T extends string ? `${T}` : T extends readonly (infer U)[] ? AsJson<U>[] : T extends object ? { [K in keyof T]: AsJson<T[K]> } : T;",
    `export const dashboard = ${JSON.stringify(dashboard, null, 2)} satisfies AsJson<Dashboard>;`,
    "",
  ].join("\n");

test("grafana › the dashboard type-checks against @grafana/schema's Dashboard; broken copies do not (self-check)", (t) => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD_JSON, "utf8"));
  // Given the dashboard and three copies with one fault each: a wrong type, an unknown key, an unknown enum value
  const faults: Record<string, (d: any) => void> = {
    "wrong-type": (d) => (d.panels[1].gridPos.h = "8"),
    "unknown-key": (d) => (d.refreshEvery = "10s"),
    "unknown-enum": (d) => (d.panels.find((p: any) => p.fieldConfig?.defaults?.thresholds).fieldConfig.defaults.thresholds.mode = "relative"),
  };
  const dir = join(ROOT, "dist", "grafana-schema-check");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "dashboard.ts"), checked(dashboard));
  for (const [name, breakIt] of Object.entries(faults)) {
    const copy = structuredClone(dashboard);
    breakIt(copy);
    writeFileSync(join(dir, `${name}.ts`), checked(copy));
  }
  // When tsc checks them all (inside the repo, so @grafana/schema resolves from node_modules)
  const files = ["dashboard.ts", ...Object.keys(faults).map((n) => `${n}.ts`)];
  const run = spawnSync(process.execPath, [tscPath, "--noEmit", "--strict", "--skipLibCheck", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", ...files], { cwd: dir, encoding: "utf8" });
  const errors = run.stdout.split("\n").filter((l) => /error TS\d+/.test(l));
  // Then the dashboard has no error, and each broken copy has its fault reported
  t.deepEqual(errors.filter((l) => l.startsWith("dashboard.ts")), [], run.stdout);
  t.true(errors.some((l) => l.startsWith("wrong-type.ts") && /'string' is not assignable to type 'number'/.test(l)), run.stdout);
  t.true(errors.some((l) => l.startsWith("unknown-key.ts") && /refreshEvery/.test(l)), run.stdout);
  t.true(errors.some((l) => l.startsWith("unknown-enum.ts") && /"relative"/.test(l)), run.stdout);
});

test("grafana › panels carry a title, a one-line description and a unit; ids are unique; the data source is the template variable", (t) => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD_JSON, "utf8"));
  const panels = dashboard.panels.filter((p: { type: string }) => p.type !== "row");
  t.true(panels.length >= 20);
  const ids = dashboard.panels.map((p: { id: number }) => p.id);
  t.is(new Set(ids).size, ids.length);
  for (const p of panels) {
    t.truthy(p.title, JSON.stringify(p.gridPos));
    t.true(typeof p.description === "string" && p.description.length > 20 && !p.description.includes("\n"), `${p.title}: description`);
    t.truthy(p.fieldConfig?.defaults?.unit, `${p.title}: unit`);
    t.deepEqual(p.datasource, { type: "prometheus", uid: "${datasource}" }, p.title);
    t.true(p.targets.length > 0 && p.targets.every((q: { expr?: string }) => typeof q.expr === "string" && q.expr.length > 0), p.title);
  }
  t.is(dashboard.templating.list.find((v: { name: string }) => v.name === "datasource")?.query, "prometheus");
});
