// Stryker's build step, run once in its sandbox (cwd): link the repository's node_modules and .meshext (the
// pinned Envoy; Stryker links node_modules only after the build, so it is told not to) and compile the instrumented sources with tsc, as `npm run build:ts` does.
// With AREA, then the coverage pass: each of the area's test files runs once, alone, with no mutant active, every
// node process it starts loading scripts/stryker-coverage-hook.mjs; the mutant ids each file reached go into
// .stryker-coverage/map.json (read by scripts/stryker-dispatch.mjs) and a copy at MAP_COPY for the summary.
// Usage: node scripts/stryker-build.mjs ROOT [AREA MAP_COPY]
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { STRYKER_AREAS } from "./stryker-areas.mjs";
import { coverageMap } from "./stryker-coverage.mjs";

const [root, areaName, mapCopy] = process.argv.slice(2);
if (!root) throw new Error("usage: node scripts/stryker-build.mjs ROOT [AREA MAP_COPY]");
for (const dir of ["node_modules", ".meshext"]) if (existsSync(join(root, dir)) && !existsSync(dir)) symlinkSync(join(root, dir), dir, "dir");
execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], { stdio: "inherit" });

if (areaName) {
  const area = STRYKER_AREAS[areaName];
  if (!area) throw new Error(`stryker-build: unknown area ${areaName}`);
  const out = resolve(".stryker-coverage");
  rmSync(out, { recursive: true, force: true });
  const hook = pathToFileURL(resolve("scripts/stryker-coverage-hook.mjs")).href;
  const records = [];
  const seconds = {};
  area.tests.forEach((testFile, i) => {
    const dir = join(out, String(i));
    mkdirSync(dir, { recursive: true });
    const started = Date.now();
    const run = spawnSync(process.execPath, ["node_modules/ava/entrypoints/cli.mjs", "--no-worker-threads", testFile], {
      stdio: "inherit",
      env: { ...process.env, CI: "1", FORCE_COLOR: "0", NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${hook}`.trim(), STRYKER_COVERAGE_DIR: dir, STRYKER_COVERAGE_TEST: testFile },
    });
    seconds[testFile] = (Date.now() - started) / 1000;
    if (run.status !== 0) throw new Error(`stryker-build: coverage pass: ${testFile} failed unmutated (exit ${run.status})`);
    // Only whole files: <pid>.json.tmp is a save a SIGKILL cut short (the hook renames a save into place when done).
    for (const f of readdirSync(dir).filter((f) => f.endsWith(".json"))) records.push(JSON.parse(readFileSync(join(dir, f), "utf8")));
  });
  const map = coverageMap(records);
  const text = JSON.stringify({ area: areaName, tests: area.tests, seconds, map }, null, 1);
  writeFileSync(join(out, "map.json"), text);
  if (mapCopy) {
    mkdirSync(dirname(mapCopy), { recursive: true });
    writeFileSync(mapCopy, text);
  }
  console.log(`stryker-build: coverage pass: ${Object.keys(map).length} mutants reached by ${area.tests.length} test files (${records.length} processes)`);
}
