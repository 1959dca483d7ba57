// Stryker's command-runner command (cwd: the sandbox): runs, with --fail-fast, only the test files that reached
// the active mutant in the coverage pass (.stryker-coverage/map.json from scripts/stryker-build.mjs); exits 0 at
// once when none did (the summary counts that mutant as "no coverage"); in the dry run (no mutant) runs them all.
// A mutant's files run one at a time, fastest first (fastestFirst), stopping at the first that fails.
// AVA's timeout comes from the files' unmutated times (avaTimeoutSeconds), so a hung test fails early.
// Usage: node scripts/stryker-dispatch.mjs AREA
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { STRYKER_AREAS } from "./stryker-areas.mjs";
import { avaTimeoutSeconds, fastestFirst, testsFor } from "./stryker-coverage.mjs";

const area = STRYKER_AREAS[process.argv[2]];
if (!area) {
  console.error(`stryker-dispatch: unknown area ${JSON.stringify(process.argv[2])}`);
  process.exit(2);
}
const { map, seconds } = JSON.parse(readFileSync(".stryker-coverage/map.json", "utf8"));
const tests = testsFor(map, area.tests, process.env.__STRYKER_ACTIVE_MUTANT__);
if (tests.length === 0) process.exit(0);
const ava = (files) =>
  spawnSync(process.execPath, ["node_modules/ava/entrypoints/cli.mjs", "--no-worker-threads", "--fail-fast", `--timeout=${avaTimeoutSeconds(seconds, files)}s`, ...files], {
    stdio: "inherit",
    env: { ...process.env, CI: "1", FORCE_COLOR: "0" },
  }).status ?? 1;
// The dry run runs every file in one AVA run; a mutant's files run one at a time, fastest first, until one fails.
if (!process.env.__STRYKER_ACTIVE_MUTANT__) process.exit(ava(tests));
for (const file of fastestFirst(tests, seconds)) {
  const status = ava([file]);
  if (status !== 0) process.exit(status);
}
process.exit(0);
