// Checks the import graph of extproc/: no file-level import circle, no folder-level circle, and in
// extproc/policy/ no stage importing a later stage. Reads the TypeScript sources (type-only imports
// count: a circle of types is still a circle for the reader). Exit 1 with every violation listed.
//
//   node scripts/import-graph.mjs               check (run by `npm test`: test/policy/import-graph.test.ts)
//   node scripts/import-graph.mjs --print       also print each file's imports, for a look at the map
//   node scripts/import-graph.mjs --root DIR    check DIR/extproc instead of this repository's
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const rootArg = process.argv.indexOf("--root");
const ROOT = rootArg > 0 ? resolve(process.argv[rootArg + 1]) : resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SRC = join(ROOT, "extproc");

/**
 * The policy engine's stages, first to last: a file in one may import only from itself, the stages before
 * it, and `model` (the shared types every stage speaks). Folders under extproc/policy/ not listed here fail.
 */
export const POLICY_STAGES = ["model", "documents", "selection", "plans", "decide", "views"];

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) { if (p !== join(SRC, "gen")) out.push(...walk(p)); } // gen/: protoc output
    else if (p.endsWith(".ts") && !p.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

const IMPORT_RE = /(?:^|[\n;])\s*(?:import|export)\s(?:[^;'"]*?\sfrom\s*)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** Relative imports of one source file, as repository-relative .ts paths. */
function importsOf(file) {
  const text = readFileSync(file, "utf8");
  const out = new Set();
  for (const m of text.matchAll(IMPORT_RE)) {
    const spec = m[1] ?? m[2];
    if (!spec.startsWith(".")) continue;
    const target = resolve(dirname(file), spec).replace(/\.js$/, ".ts");
    if (target.startsWith(SRC + "/")) out.add(relative(ROOT, target));
  }
  return [...out].sort();
}

/** Strongly connected components of more than one node (or a self-loop): Tarjan's algorithm. */
function circles(graph) {
  let index = 0;
  const idx = new Map(), low = new Map(), onStack = new Set(), stack = [], found = [];
  const visit = (v) => {
    idx.set(v, index); low.set(v, index); index++;
    stack.push(v); onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do { w = stack.pop(); onStack.delete(w); comp.push(w); } while (w !== v);
      if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(comp.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

/** The stage a file under extproc/policy/ belongs to, or undefined for files elsewhere. */
function stageOf(path) {
  const m = /^extproc\/policy\/([^/]+)\//.exec(path);
  return m ? m[1] : /^extproc\/policy\/[^/]+$/.test(path) ? "(top)" : undefined;
}

export function check() {
  const files = walk(SRC).map((f) => relative(ROOT, f)).sort();
  const graph = new Map(files.map((f) => [f, importsOf(join(ROOT, f))]));
  const problems = [];

  for (const c of circles(graph)) problems.push(`import circle between files: ${c.join(" ↔ ")}`);

  // Folder level: each folder under extproc/ is one node; files directly in extproc/ (entry points and the
  // shared contracts such as decision.ts and log.ts) are a node each.
  const unit = (f) => (dirname(f) === "extproc" ? f : dirname(f));
  const folders = new Map();
  for (const [f, deps] of graph) {
    const from = unit(f);
    if (!folders.has(from)) folders.set(from, new Set());
    for (const d of deps) if (unit(d) !== from) folders.get(from).add(unit(d));
  }
  const folderGraph = new Map([...folders].map(([k, v]) => [k, [...v]]));
  for (const c of circles(folderGraph)) {
    const edges = [];
    for (const [f, deps] of graph) for (const d of deps) {
      if (unit(f) !== unit(d) && c.includes(unit(f)) && c.includes(unit(d))) edges.push(`${f} → ${d}`);
    }
    problems.push(`import circle between folders ${c.join(" ↔ ")}:\n    ${edges.join("\n    ")}`);
  }

  for (const [f, deps] of graph) {
    const s = stageOf(f);
    if (s === undefined) continue;
    if (!POLICY_STAGES.includes(s)) { problems.push(`${f}: not in a policy stage folder (${POLICY_STAGES.join(", ")})`); continue; }
    for (const d of deps) {
      const t = stageOf(d);
      if (t === undefined) continue;
      if (!POLICY_STAGES.includes(t)) continue;
      if (t !== "model" && POLICY_STAGES.indexOf(t) > POLICY_STAGES.indexOf(s)) {
        problems.push(`upward import: ${f} (stage ${s}) imports ${d} (later stage ${t})`);
      }
    }
  }

  return { files, graph, problems };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { files, graph, problems } = check();
  if (process.argv.includes("--print")) for (const f of files) console.log(`${f}\n  ${graph.get(f).join("\n  ")}`);
  if (problems.length > 0) {
    console.error(`import graph of extproc/: ${problems.length} problem(s)`);
    for (const p of problems) console.error(`- ${p}`);
    process.exit(1);
  }
  const edges = [...graph.values()].reduce((n, d) => n + d.length, 0);
  console.log(`import graph of extproc/: ${files.length} files, ${edges} imports, no circle, no upward import`);
}
