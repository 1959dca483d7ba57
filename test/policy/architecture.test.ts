// architecture › extproc/policy/** is a pure core: no node:*, @grpc/*, transport or other sidecar imports.
import test from "ava";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const DIR = fileURLToPath(new URL("../../../extproc/policy/", import.meta.url));
const ALLOWED_OUTSIDE = new Set(["../decision.js"]);

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
