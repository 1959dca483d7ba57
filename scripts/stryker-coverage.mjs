// Per-test coverage for the Stryker command runner, as pure functions: the map from the coverage pass's records
// (scripts/stryker-worker.mjs --coverage), the plan the daemon follows per mutant (scripts/stryker-daemon.mjs), the
// timeouts, and the summary's reclassification of unreached mutants as "no coverage".

const LOAD = "load › ";
const AFTER = "after › ";
/** Stryker's factor over a mutant's unmutated hit count before its hit limit stops an endless loop. */
export const HIT_LIMIT_FACTOR = 100;
const HIT_LIMIT_FLOOR = 10_000;

/**
 * The coverage map from the coverage pass, one record per test file (run alone in a fresh worker).
 * A hit under a test's id, under "after › id" (work the test left running) or in a node process the test started
 * counts for that test; a hit while a file was imported ("load › file", or no test id) makes the mutant static: its
 * code ran before any test, so switching it on at run time would come too late.
 * @param {{ files: string[], tests: { id: string, file: string, ms: number, ok: boolean }[], coverage: { static?: Record<string, number>, perTest?: Record<string, Record<string, number>> }, children?: { testFile: string, coverage?: { static?: Record<string, number>, perTest?: Record<string, Record<string, number>> } }[] }[]} records
 * @returns {{ tests: Record<string, { file: string, ms: number }>, mutants: Record<string, { tests: string[], hits: number }>, static: Record<string, string[]> }}
 *   mutants: id → the tests that reached it (fastest first, ties by id) and its in-process hits over them;
 *   static: id → the test files whose import reached it
 */
export function coverageMap(records) {
  const tests = {};
  const reached = new Map(); // mutant id → Map(test id → in-process hits)
  const statics = new Map(); // mutant id → Set(test file)
  const add = (mutant, test, hits, inProcess) => {
    if (!(hits > 0)) return;
    if (!reached.has(mutant)) reached.set(mutant, new Map());
    const byTest = reached.get(mutant);
    byTest.set(test, (byTest.get(test) ?? 0) + (inProcess ? hits : 0));
  };
  const addStatic = (mutant, files, hits) => {
    if (!(hits > 0)) return;
    if (!statics.has(mutant)) statics.set(mutant, new Set());
    for (const f of files) statics.get(mutant).add(f);
  };
  for (const record of records) {
    for (const t of record.tests) tests[t.id] = { file: t.file, ms: t.ms };
    for (const [id, hits] of Object.entries(record.coverage.static ?? {})) addStatic(id, record.files, hits);
    for (const [key, counts] of Object.entries(record.coverage.perTest ?? {})) {
      const test = key.startsWith(AFTER) ? key.slice(AFTER.length) : key;
      for (const [id, hits] of Object.entries(counts)) {
        if (key.startsWith(LOAD)) addStatic(id, [key.slice(LOAD.length)], hits);
        else add(id, test, hits, true);
      }
    }
    for (const child of record.children ?? []) {
      const counts = [child.coverage?.static ?? {}, ...Object.values(child.coverage?.perTest ?? {})];
      for (const c of counts) for (const [id, hits] of Object.entries(c)) add(id, child.testFile, hits, false);
    }
  }
  const byNumber = (a, b) => Number(a) - Number(b) || a.localeCompare(b);
  const mutants = {};
  for (const id of [...reached.keys()].sort(byNumber)) {
    const byTest = reached.get(id);
    mutants[id] = { tests: fastestFirst([...byTest.keys()], tests), hits: [...byTest.values()].reduce((a, b) => a + b, 0) };
  }
  const staticFiles = {};
  for (const id of [...statics.keys()].sort(byNumber)) staticFiles[id] = [...statics.get(id)].sort();
  return { tests, mutants, static: staticFiles };
}

/**
 * Tests ordered fastest first by their unmutated time (ties by id; tests with no time last), so a mutant a quick test
 * kills never starts the slow ones that start real binaries. The input is left as it was.
 * @param {string[]} ids
 * @param {Record<string, { ms: number }>} tests
 */
export function fastestFirst(ids, tests) {
  const time = (id) => tests[id]?.ms ?? Infinity;
  return [...ids].sort((a, b) => time(a) - time(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The mutant ids of each source file, read from the instrumented sources (Stryker's switches and coverage calls name them).
 * @param {Record<string, string>} sources file → instrumented text
 * @returns {Record<string, string>} mutant id → file
 */
export function mutantFiles(sources) {
  const files = {};
  for (const [file, text] of Object.entries(sources)) {
    for (const m of text.matchAll(/stry(?:MutAct|Cov)_9fa48\(((?:"\d+"(?:,\s*)?)+)\)/g)) for (const id of m[1].match(/\d+/g)) files[id] ??= file;
  }
  return files;
}

/**
 * What the daemon does for one mutant.
 *   none:  no test reached it (it survives at once; the summary calls it "no coverage")
 *   warm:  run `tests` in a running worker, switching the mutant on and off around them
 *   fresh: a static mutant: a new worker, started with the mutant on, imports `files` and runs `tests`, fastest first:
 *          those that reached it, a few tests that together reach every other mutant of its source file reached at
 *          run time (fileCover: each function of the file that has a mutant runs at least once, reading what the
 *          file's import made), the quickest tests that reach the file at all (fileReaders: its unit tests, which
 *          check what the cover's broad tests only run through), the tests of the files whose import reached it
 *          that reach no mutant at run time (they can only read values: an exported constant), and the quickest tests
 *          of those files within the same budget (a constant's users: a file of constants has no readers of its own);
 *          only when that is no test at all, every test of those files.
 *          Every test reaching the file was ~200 tests and 6 s a survivor in the policy area, where every test
 *          imports the whole engine; the cover is pessimistic, never optimistic: fewer tests can only kill less.
 * @param {ReturnType<typeof coverageMap>} map
 * @param {Record<string, string>} files mutant id → source file (mutantFiles)
 * @param {string} mutant
 * @returns {{ kind: "none" } | { kind: "warm" | "fresh", tests: string[], files: string[], hitLimit: number }}
 */
export function planFor(map, files, mutant) {
  const own = map.mutants[mutant]?.tests ?? [];
  const hitLimit = Math.max(HIT_LIMIT_FLOOR, HIT_LIMIT_FACTOR * (map.mutants[mutant]?.hits ?? 0));
  const importedBy = map.static[mutant];
  if (!importedBy) return own.length > 0 ? { kind: "warm", tests: own, files: testFilesOf(map, own), hitLimit } : { kind: "none" };
  const ofImporters = fastestFirst(Object.keys(map.tests).filter((t) => importedBy.includes(map.tests[t].file)), map.tests);
  const readersOnly = ofImporters.filter((t) => !reachesAny(map).has(t));
  const quickImporters = withinBudget(ofImporters, map.tests, READERS_BUDGET_MS);
  let tests = fastestFirst([...new Set([...own, ...fileCover(map, files, files[mutant]), ...fileReaders(map, files, files[mutant]), ...readersOnly, ...quickImporters])], map.tests);
  if (tests.length === 0) tests = ofImporters;
  if (tests.length === 0) return { kind: "none" };
  return { kind: "fresh", tests, files: testFilesOf(map, tests), hitLimit };
}

const covers = new WeakMap(); // map → Map(source file → its cover)
const reaching = new WeakMap(); // map → Set(test that reaches some mutant at run time)
const reachesAny = (map) => {
  if (!reaching.has(map)) reaching.set(map, new Set(Object.values(map.mutants).flatMap((m) => m.tests)));
  return reaching.get(map);
};

/**
 * Tests that together reach every mutant of `source` reached at run time (import-time hits aside), chosen greedily by
 * new mutants reached per unmutated ms, returned fastest first. Kept per map and file: the daemon asks per mutant.
 * @param {ReturnType<typeof coverageMap>} map
 * @param {Record<string, string>} files mutant id → source file
 * @param {string | undefined} source
 * @returns {string[]}
 */
export function fileCover(map, files, source) {
  if (source === undefined) return [];
  if (!covers.has(map)) covers.set(map, new Map());
  const known = covers.get(map);
  if (known.has(source)) return known.get(source);
  const reaches = new Map(); // test → the file's mutants it reaches
  for (const [id, m] of Object.entries(map.mutants)) {
    if (files[id] !== source) continue;
    for (const t of m.tests) {
      if (!reaches.has(t)) reaches.set(t, new Set());
      reaches.get(t).add(id);
    }
  }
  const uncovered = new Set([...reaches.values()].flatMap((ids) => [...ids]));
  const chosen = [];
  const candidates = fastestFirst([...reaches.keys()], map.tests); // ties go to the faster test
  while (uncovered.size > 0) {
    let best;
    let bestValue = 0;
    for (const t of candidates) {
      if (!reaches.has(t)) continue; // chosen already
      let fresh = 0;
      for (const id of reaches.get(t)) if (uncovered.has(id)) fresh++;
      const value = fresh / ((map.tests[t]?.ms ?? 15_000) + 1);
      if (value > bestValue) [best, bestValue] = [t, value];
    }
    chosen.push(best);
    for (const id of reaches.get(best)) uncovered.delete(id);
    reaches.delete(best);
  }
  const cover = fastestFirst(chosen, map.tests);
  known.set(source, cover);
  return cover;
}

/** Unmutated test time fileReaders may add to a static mutant's plan. */
export const READERS_BUDGET_MS = 2000;

/**
 * The quickest tests that reach any mutant of `source` at run time, fastest first, while their unmutated times add up
 * to at most `budgetMs`: a file's own unit tests are its quickest readers, and they check its tables and constants
 * where a cover of broad tests may only run through them. Kept per map, file and budget, as fileCover is.
 * @param {ReturnType<typeof coverageMap>} map
 * @param {Record<string, string>} files mutant id → source file
 * @param {string | undefined} source
 */
export function fileReaders(map, files, source, budgetMs = READERS_BUDGET_MS) {
  if (source === undefined) return [];
  if (!readersOf.has(map)) readersOf.set(map, new Map());
  const known = readersOf.get(map);
  const key = `${budgetMs}:${source}`;
  if (!known.has(key)) known.set(key, quickestReaders(map, files, source, budgetMs));
  return known.get(key);
}

const readersOf = new WeakMap(); // map → Map(budget:source → its readers): the daemon asks per mutant

function quickestReaders(map, files, source, budgetMs) {
  const reaching = new Set();
  for (const [id, m] of Object.entries(map.mutants)) if (files[id] === source) for (const t of m.tests) reaching.add(t);
  return withinBudget(fastestFirst([...reaching], map.tests), map.tests, budgetMs);
}

/** The first of `ordered` (fastest first) while their unmutated times add up to at most `budgetMs`. */
function withinBudget(ordered, tests, budgetMs) {
  const out = [];
  let spentMs = 0;
  for (const t of ordered) {
    spentMs += tests[t]?.ms ?? Infinity;
    if (spentMs > budgetMs) break;
    out.push(t);
  }
  return out;
}

const testFilesOf = (map, tests) => [...new Set(tests.map((t) => map.tests[t]?.file).filter(Boolean))].sort();

/**
 * A test's timeout under a mutant: 5 × its unmutated time plus 1 s, so a mutant that hangs a test fails in about a
 * second while a test slowed by a busy machine still finishes.
 * @param {Record<string, { ms: number }>} tests
 * @param {string} id
 */
export function testTimeoutMs(tests, id) {
  return Math.ceil(5 * (tests[id]?.ms ?? 15_000) + 1000);
}

/**
 * The report with every survivor no test reached marked "NoCoverage" (a copy; the input is left as is).
 * Killed and timed-out mutants keep their status: a test killed them, whatever the map says.
 * @param {{ files: Record<string, { mutants: { id: string, status: string }[] }> }} report mutation.json
 * @param {ReturnType<typeof coverageMap>} map
 * @param {Record<string, string>} files mutant id → source file
 */
export function reclassifyUncovered(report, map, files) {
  const out = {};
  for (const [file, entry] of Object.entries(report.files)) {
    out[file] = {
      ...entry,
      mutants: entry.mutants.map((m) => (m.status === "Survived" && planFor(map, files, m.id).kind === "none" ? { ...m, status: "NoCoverage", coveredBy: [] } : m)),
    };
  }
  return { ...report, files: out };
}
