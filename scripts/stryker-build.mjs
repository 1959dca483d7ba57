// Stryker's build step, run once in its sandbox (cwd): link the repository's node_modules and .meshext (the
// pinned Envoy; Stryker links node_modules only after the build, so it is told not to) and compile the instrumented sources with tsc, as `npm run build:ts` does.
// With AREA, then the coverage pass: each of the area's test files runs alone in a fresh harness worker
// (scripts/stryker-worker.mjs --coverage), its tests one at a time, unmutated, each under its own test id; the map of
// which tests reach which mutant (scripts/stryker-coverage.mjs coverageMap), each mutant's source file and the
// worker count go into .stryker-coverage/map.json (read by the daemon) and a copy at MAP_COPY for the summary; the
// ids of the mutants some test reaches into .stryker-coverage/planned.json (read by the dispatcher).
// A test that fails unmutated in the harness stops the run: its kills could not be believed.
// Usage: node scripts/stryker-build.mjs ROOT [AREA MAP_COPY CONCURRENCY]
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { STRYKER_AREAS } from "./stryker-areas.mjs";
import { coverageMap, mutantFiles, planFor } from "./stryker-coverage.mjs";

const [root, areaName, mapCopy, concurrencyArg] = process.argv.slice(2);
if (!root) throw new Error("usage: node scripts/stryker-build.mjs ROOT [AREA MAP_COPY CONCURRENCY]");
for (const dir of ["node_modules", ".meshext"]) if (existsSync(join(root, dir)) && !existsSync(dir)) symlinkSync(join(root, dir), dir, "dir");
execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], { stdio: "inherit" });

/** The instrumented TypeScript sources under extproc/, by path. */
function instrumentedSources(dir = "extproc", out = {}) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) instrumentedSources(path, out);
    else if (e.name.endsWith(".ts")) out[path] = readFileSync(path, "utf8");
  }
  return out;
}

/** One test file's coverage run in a fresh worker: resolves with its record, rejects when it could not run. */
function coverageOf(testFile, out) {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ["--import=./scripts/stryker-ava-loader.mjs", "scripts/stryker-worker.mjs", "--coverage", out, testFile], {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, CI: "1", FORCE_COLOR: "0" },
    });
    child.on("exit", (code) => (code === 0 ? res(JSON.parse(readFileSync(out, "utf8"))) : rej(new Error(`stryker-build: coverage pass: ${testFile}: the harness exited ${code}`))));
  });
}

if (areaName) {
  const area = STRYKER_AREAS[areaName];
  if (!area) throw new Error(`stryker-build: unknown area ${areaName}`);
  const concurrency = Number(concurrencyArg ?? 1);
  const out = resolve(".stryker-coverage");
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const started = Date.now();
  const queue = area.tests.map((file, i) => ({ file, out: join(out, `${i}.json`) }));
  const records = [];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let job = queue.shift(); job; job = queue.shift()) records.push(await coverageOf(job.file, job.out));
    }),
  );
  const failed = records.flatMap((r) => r.tests.filter((t) => !t.ok));
  if (failed.length > 0) {
    for (const t of failed) console.error(`stryker-build: unmutated, under the harness: ${t.id}: ${t.message}`);
    throw new Error(`stryker-build: coverage pass: ${failed.length} tests fail unmutated under the harness (scripts/stryker-ava-shim.mjs); fix them before mutating`);
  }
  const map = coverageMap(records);
  const files = mutantFiles(instrumentedSources());
  const text = JSON.stringify({ area: areaName, tests: area.tests, concurrency, map, files });
  writeFileSync(join(out, "map.json"), text);
  // The mutants some test reaches: the dispatcher answers every other one at once, without the daemon.
  writeFileSync(join(out, "planned.json"), JSON.stringify(Object.keys(files).filter((id) => planFor(map, files, id).kind !== "none")));
  if (mapCopy) {
    mkdirSync(dirname(mapCopy), { recursive: true });
    writeFileSync(mapCopy, text);
  }
  const testCount = Object.keys(map.tests).length;
  console.log(
    `stryker-build: coverage pass: ${testCount} tests in ${area.tests.length} files, ${Object.keys(map.mutants).length} mutants reached (${Object.keys(map.static).length} at import time) in ${Math.round((Date.now() - started) / 1000)} s`,
  );
}
