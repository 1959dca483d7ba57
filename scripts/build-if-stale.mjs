#!/usr/bin/env node
// Builds only what `npm start` runs, and only what is out of date: the generated protocol code (extproc/gen/),
// the product's TypeScript (dist/extproc/, without the tests and the bench, which `npm test` compiles) and the drain
// filter's .wasm (build/). A step is
// up to date when its output is newer than every one of its inputs (a stamp file under dist/.build/ records when it
// last ran). Says what it does. `--check`: only say what is stale (exit 1 when something is). `--root DIR`: the tree.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const check = args.includes("--check");
const rootAt = args.indexOf("--root");
const root = rootAt >= 0 ? args[rootAt + 1] : fileURLToPath(new URL("..", import.meta.url));

/** Every file under `dir` (relative to root) whose name passes `keep`. */
function filesUnder(dir, keep = () => true) {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && keep(e.name))
    .map((e) => join(e.parentPath ?? e.path, e.name));
}

const STEPS = [
  {
    name: "protocol code (extproc/gen/)",
    inputs: () => ["package-lock.json", "scripts/gen-proto.sh", "scripts/buf.gen.yaml"].map((f) => join(root, f)),
    outputs: () => [join(root, "extproc/gen")],
    what: "buf generate (scripts/gen-proto.sh)",
    run: ["bash", ["scripts/gen-proto.sh"]],
  },
  {
    name: "product TypeScript (dist/extproc/)",
    inputs: () => [...filesUnder("extproc", (n) => n.endsWith(".ts")), ...["package-lock.json", "tsconfig.json", "tsconfig.extproc.json"].map((f) => join(root, f))],
    outputs: () => [join(root, "dist/extproc/cli.js")],
    what: "tsc -p tsconfig.extproc.json (the product only; npm test compiles tests and bench)",
    run: [process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.extproc.json"]],
  },
  {
    // `meshext up` runs a real Envoy with the drain filter when one is installed.
    name: "drain filter (build/meshext_drain.wasm)",
    inputs: () => [...filesUnder("wasm", (n) => n.endsWith(".ts") || n.endsWith(".json")), ...["asconfig.json", "scripts/build-wasm.mjs", "package-lock.json"].map((f) => join(root, f))],
    outputs: () => [join(root, "build/meshext_drain.wasm")],
    what: "asc (scripts/build-wasm.mjs)",
    run: [process.execPath, [join(root, "scripts/build-wasm.mjs")]],
  },
];

const stampOf = (step) => join(root, "dist/.build", step.name.replace(/[^a-z]+/gi, "-") + ".stamp");
const mtime = (f) => (existsSync(f) ? statSync(f).mtimeMs : -Infinity);

/** Why a step must run, or undefined when it is up to date. */
function staleness(step) {
  if (step.outputs().some((o) => !existsSync(o))) return "never built";
  const built = mtime(stampOf(step));
  if (built === -Infinity) return "not built by this script yet";
  const newer = step.inputs().filter((f) => mtime(f) > built);
  return newer.length === 0 ? undefined : `changed: ${newer.slice(0, 3).map((f) => relative(root, f)).join(", ")}${newer.length > 3 ? ` and ${newer.length - 3} more` : ""}`;
}

let stale = 0;
for (const step of STEPS) {
  const why = staleness(step);
  if (why === undefined) {
    process.stderr.write(`build: ${step.name} up to date\n`);
    continue;
  }
  stale++;
  if (check) {
    process.stderr.write(`build: ${step.name} stale (${why})\n`);
    continue;
  }
  process.stderr.write(`build: ${step.name} (${why}): ${step.what}…\n`);
  const startedAt = Date.now();
  const r = spawnSync(step.run[0], step.run[1], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) {
    process.stderr.write(`build: ${step.name} failed (exit ${r.status ?? r.signal})\n`);
    process.exit(r.status ?? 1);
  }
  // The stamp carries the time the step started: an input edited while it ran is seen as changed next time.
  mkdirSync(join(root, "dist/.build"), { recursive: true });
  writeFileSync(stampOf(step), "");
  utimesSync(stampOf(step), startedAt / 1000, startedAt / 1000);
  process.stderr.write(`build: ${step.name} done in ${((Date.now() - startedAt) / 1000).toFixed(1)} s\n`);
}
process.exit(check && stale > 0 ? 1 : 0);
