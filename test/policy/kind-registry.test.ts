// architecture › each stage's registry of policy kinds has one entry per kind of the model, and the "Adding a
// policy kind" checklist of docs/architecture.md names exactly those registry files, one per stage at most.
import test from "ava";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { KIND_TRAITS, POLICY_TYPES } from "../../extproc/policy/model/types.js";
import { SPEC_KINDS } from "../../extproc/policy/documents/kinds.js";
import { DECIDE_KINDS, INBOUND_STEPS } from "../../extproc/policy/decide/kinds.js";
import { FROM_KINDS } from "../../extproc/policy/plans/compile.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** Per stage, the file a new kind edits and the registry it holds (undefined: the stage does not know kinds). */
const REGISTRIES: Record<string, { file: string; entries: object } | undefined> = {
  model: { file: "model/types.ts", entries: KIND_TRAITS },
  documents: { file: "documents/kinds.ts", entries: SPEC_KINDS },
  selection: undefined,
  plans: undefined,
  decide: { file: "decide/kinds.ts", entries: DECIDE_KINDS },
  views: undefined,
};

/** The checklist's steps as `stage: file` (or `stage: nothing`), read from docs/architecture.md. */
function checklist(): Record<string, string> {
  const doc = readFileSync(`${ROOT}docs/architecture.md`, "utf8");
  const section = doc.slice(doc.indexOf("## Adding a policy kind"));
  const steps: Record<string, string> = {};
  for (const m of section.matchAll(/^\d+\. (\w+): (?:`([^`]+)`|(nothing))/gm)) steps[m[1]!] = m[2] ?? "nothing";
  return steps;
}

test("architecture › given the model's kinds, when each stage's registry is read, then it has an entry for every kind and no other", (t) => {
  for (const [stage, registry] of Object.entries(REGISTRIES)) {
    if (registry) t.deepEqual(Object.keys(registry.entries).sort(), [...POLICY_TYPES].sort(), stage);
  }
});

test("architecture › given the decide registry, when its inbound steps are listed, then they run MTP, then faults, then the rate limit", (t) => {
  const order = INBOUND_STEPS.map((s) => Object.entries(DECIDE_KINDS).find(([, k]) => k === s)![0]);
  t.deepEqual(order, ["MeshTrafficPermission", "MeshFaultInjection", "MeshRateLimit"]);
  t.deepEqual(Object.entries(DECIDE_KINDS).filter(([, k]) => k.direction === "outbound").map(([name]) => name), ["MeshHTTPRoute"]);
});

test("architecture › given the new-kind checklist, when its steps are read, then each stage names its registry file or nothing", (t) => {
  const steps = checklist();
  t.deepEqual(Object.keys(steps), Object.keys(REGISTRIES), "one step per stage, in pipeline order");
  for (const [stage, registry] of Object.entries(REGISTRIES)) {
    t.is(steps[stage], registry?.file ?? "nothing", stage);
    if (registry) t.true(existsSync(`${ROOT}extproc/policy/${registry.file}`), registry.file);
  }
});

test("given the model's kinds, when the compiler's per-inbound kinds are read, then they are every kind but MeshHTTPRoute, in model order", (t) => {
  // MeshHTTPRoute selects outbound routes; the other kinds are compiled per inbound from `from` / `rules`
  t.deepEqual([...FROM_KINDS], ["MeshTrafficPermission", "MeshFaultInjection", "MeshRateLimit"]);
  t.deepEqual(POLICY_TYPES.filter((k) => !(FROM_KINDS as readonly string[]).includes(k)), ["MeshHTTPRoute"]);
});
