// architecture › extproc/policy/** is a pure core: no node:*, @grpc/*, transport or other sidecar imports.
import test from "ava";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const DIR = fileURLToPath(new URL("../../../extproc/policy/", import.meta.url));
// envoy-mutation-rules.ts: pure knowledge of envoy.yaml's ext_proc mutation_rules (checked below to stay pure).
const ALLOWED_OUTSIDE = new Set(["../decision.js", "../envoy-mutation-rules.js"]);

test("architecture › policy core imports only itself, the decision seam and yaml", (t) => {
  const files = readdirSync(DIR).filter((f) => f.endsWith(".ts"));
  t.true(files.length > 10);
  const bad: string[] = [];
  for (const f of files) {
    const src = readFileSync(join(DIR, f), "utf8");
    for (const m of src.matchAll(/(?:import|export)[^"']*?from\s+["']([^"']+)["']/g)) {
      const spec = m[1]!;
      const ok = spec.startsWith("./") || ALLOWED_OUTSIDE.has(spec) || spec === "yaml";
      if (!ok) bad.push(`${f} → ${spec}`);
    }
  }
  t.deepEqual(bad, []);
});

test("architecture › the mutation-rules module the policy core reads is pure too", (t) => {
  const src = readFileSync(fileURLToPath(new URL("../../../extproc/envoy-mutation-rules.ts", import.meta.url)), "utf8");
  const imports = [...src.matchAll(/(?:import|export)[^"']*?from\s+["']([^"']+)["']/g)].map((m) => m[1]);
  t.deepEqual(imports, ["./decision.js"]);
});
