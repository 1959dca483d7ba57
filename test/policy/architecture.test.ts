// architecture › extproc/policy/** is a pure core: no node:*, @grpc/*, transport or other sidecar imports.
import test from "ava";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join, relative, resolve } from "node:path";

const DIR = fileURLToPath(new URL("../../../extproc/policy/", import.meta.url));
// envoy-mutation-rules.ts: pure knowledge of envoy.yaml's ext_proc mutation_rules (checked below to stay pure).
const ALLOWED_OUTSIDE = new Set(["../decision.js", "../envoy-mutation-rules.js"]);
// The core's files live in stage folders (model/, documents/, …): every .ts below DIR, as a path relative to it.
const sources = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? sources(join(dir, n)) : n.endsWith(".ts") ? [join(dir, n)] : []));

test("architecture › policy core imports only itself, the decision seam and yaml", (t) => {
  const files = sources(DIR).map((f) => relative(DIR, f));
  t.true(files.length > 10);
  const bad: string[] = [];
  for (const f of files) {
    const src = readFileSync(join(DIR, f), "utf8");
    for (const m of src.matchAll(/(?:import|export)[^"']*?from\s+["']([^"']+)["']/g)) {
      const spec = m[1]!;
      // A relative import stays inside the core or names one of the allowed files next to it, seen from DIR.
      const inCore = spec.startsWith(".") ? relative(DIR, resolve(dirname(join(DIR, f)), spec)) : undefined;
      // views/inspect-rules.ts names route matches by Kuma's sha256 of them: a deterministic function, no I/O.
      const hash = spec === "node:crypto" && f === join("views", "inspect-rules.ts");
      const ok = (inCore !== undefined && (!inCore.startsWith("..") || ALLOWED_OUTSIDE.has(inCore))) || spec === "yaml" || hash;
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

test("architecture › given extproc/'s own sources, when their lines are counted, then none is over 300", (t) => {
  const root = fileURLToPath(new URL("../../../extproc/", import.meta.url));
  const long = sources(root)
    .filter((f) => !relative(root, f).startsWith("gen"))
    .map((f) => ({ file: relative(root, f), lines: readFileSync(f, "utf8").split("\n").length - 1 }))
    .filter((f) => f.lines > 300);
  t.deepEqual(long, []);
});
