// Loaded with --import in every node process of Stryker's coverage pass (scripts/stryker-build.mjs): writes the
// instrumented code's hit counts (globalThis.__stryker__.mutantCoverage) to STRYKER_COVERAGE_DIR/<pid>.json.
// Written to a temp file and renamed: a test may SIGKILL its child in the middle of a save, and the coverage pass must
// then find the previous whole file, not a cut one.
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.env.STRYKER_COVERAGE_DIR;
const testFile = process.env.STRYKER_COVERAGE_TEST;
if (dir && testFile) {
  const file = join(dir, `${process.pid}.json`);
  let written = "";
  const save = () => {
    const coverage = globalThis.__stryker__?.mutantCoverage;
    if (!coverage) return;
    const text = JSON.stringify({ testFile, coverage });
    if (text === written) return;
    writeFileSync(`${file}.tmp`, text);
    renameSync(`${file}.tmp`, file);
    written = text;
  };
  process.on("exit", save);
  // A process ended by a signal (a test's child killed with SIGTERM/SIGKILL) never reaches "exit": save as it goes.
  setInterval(save, 250).unref();
}
