// Per-test-file coverage for the Stryker command runner, as pure functions: the map mutant id → the test files
// that reached it in the unmutated coverage pass (scripts/stryker-build.mjs), the lookup the dispatcher runs per
// mutant (scripts/stryker-dispatch.mjs), and the summary's reclassification of unreached mutants as "no coverage".

/**
 * The coverage map from the coverage pass's records, one per process that ran instrumented code.
 * @param {{ testFile: string, coverage?: { static?: Record<string, number>, perTest?: Record<string, Record<string, number>> } }[]} records
 * @returns {Record<string, string[]>} mutant id → the test files (sorted, no repeats) that reached it
 */
export function coverageMap(records) {
  const files = new Map();
  for (const { testFile, coverage } of records) {
    if (!coverage) continue;
    // The command runner never sets a current test id, so every hit lands in `static`; `perTest` is read too
    // in case it does: a hit under any test of this file means the file reaches the mutant.
    const hitSets = [coverage.static ?? {}, ...Object.values(coverage.perTest ?? {})];
    for (const hits of hitSets) {
      for (const [id, count] of Object.entries(hits)) {
        if (!(count > 0)) continue;
        if (!files.has(id)) files.set(id, new Set());
        files.get(id).add(testFile);
      }
    }
  }
  const map = {};
  for (const id of [...files.keys()].sort((a, b) => Number(a) - Number(b) || a.localeCompare(b))) map[id] = [...files.get(id)].sort();
  return map;
}

/**
 * What the dispatcher runs for one command-runner invocation.
 * @param {Record<string, string[]>} map the coverage map
 * @param {string[]} areaTests every test file of the area
 * @param {string | undefined} activeMutant __STRYKER_ACTIVE_MUTANT__ (unset in Stryker's dry run)
 * @returns {string[]} the test files to run; empty: no test file reaches the mutant, it survives at once
 */
export function testsFor(map, areaTests, activeMutant) {
  if (activeMutant === undefined || activeMutant === "") return [...areaTests];
  return map[activeMutant] ?? [];
}

/**
 * The report with every survivor no test file reached marked "NoCoverage" (a copy; the input is left as is).
 * Killed and timed-out mutants keep their status: a test killed them, whatever the map says.
 * @param {{ files: Record<string, { mutants: { id: string, status: string }[] }> }} report mutation.json
 * @param {Record<string, string[]>} map the coverage map
 */
export function reclassifyUncovered(report, map) {
  const files = {};
  for (const [file, entry] of Object.entries(report.files)) {
    files[file] = {
      ...entry,
      mutants: entry.mutants.map((m) => (m.status === "Survived" && !(map[m.id]?.length > 0) ? { ...m, status: "NoCoverage", coveredBy: [] } : m)),
    };
  }
  return { ...report, files };
}

/**
 * AVA's --timeout (seconds without a test finishing) for a mutant's run: 3 × the slowest covering file's whole
 * unmutated run in the coverage pass, at least 20 s, so a mutant that hangs a test fails in seconds, not AVA's 60 s.
 * @param {Record<string, number>} seconds each test file's unmutated run time in the coverage pass
 * @param {string[]} files the files the mutant's run runs
 */
export function avaTimeoutSeconds(seconds, files) {
  const slowest = Math.max(0, ...files.map((f) => seconds[f] ?? 20));
  return Math.max(20, Math.ceil(3 * slowest));
}

/**
 * The order a mutant's covering files run in, one at a time: fastest unmutated run first (ties by name), so a mutant a
 * quick in-process file kills never starts the slow ones that spawn real binaries.
 * @param {string[]} files the covering files
 * @param {Record<string, number>} seconds each test file's unmutated run time in the coverage pass
 */
export function fastestFirst(files, seconds) {
  const time = (f) => seconds[f] ?? Infinity;
  return [...files].sort((a, b) => time(a) - time(b) || a.localeCompare(b));
}
