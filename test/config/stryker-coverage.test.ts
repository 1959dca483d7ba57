// Per-test-file coverage for `npm run mutation:stryker` (scripts/stryker-coverage.mjs, -hook.mjs, -dispatch.mjs):
// the map from the coverage pass, the files the dispatcher runs per mutant, and survivors no file reached counted as no coverage.
import test from "ava";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, watch, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const SCRIPTS = join(process.cwd(), "scripts");
type Counts = Record<string, number>;
type Coverage = { static?: Counts; perTest?: Record<string, Counts> };
type Record_ = { files: string[]; tests: { id: string; file: string; ms: number; ok: boolean }[]; coverage: Coverage; children?: { testFile: string; coverage?: Coverage }[] };
type CoverageMap = { tests: Record<string, { file: string; ms: number }>; mutants: Record<string, { tests: string[]; hits: number }>; static: Record<string, string[]> };
type Plan = { kind: "none" } | { kind: "warm" | "fresh"; tests: string[]; files: string[]; hitLimit: number };
type Report = { files: Record<string, { mutants: { id: string; status: string }[] }> };
const { coverageMap, fastestFirst, fileCover, fileReaders, mutantFiles, planFor, testTimeoutMs, reclassifyUncovered, HIT_LIMIT_FACTOR } = (await import(pathToFileURL(join(SCRIPTS, "stryker-coverage.mjs")).href)) as {
  coverageMap: (records: Record_[]) => CoverageMap;
  fastestFirst: (ids: string[], tests: Record<string, { ms: number }>) => string[];
  fileCover: (map: CoverageMap, files: Record<string, string>, source: string | undefined) => string[];
  fileReaders: (map: CoverageMap, files: Record<string, string>, source: string | undefined, budgetMs?: number) => string[];
  mutantFiles: (sources: Record<string, string>) => Record<string, string>;
  planFor: (map: CoverageMap, files: Record<string, string>, mutant: string) => Plan;
  testTimeoutMs: (tests: Record<string, { ms: number }>, id: string) => number;
  reclassifyUncovered: (report: Report, map: CoverageMap, files: Record<string, string>) => Report;
  HIT_LIMIT_FACTOR: number;
};

const A = "test/a.test.ts";
const B = "test/b.test.ts";
const A1 = `${A} › one`;
const A2 = `${A} › two`;
const B1 = `${B} › one`;

/** Two files' coverage records: A1 (40 ms) reaches 1 and 2, A2 (5 ms) reaches 2 through work it left running and 3 in a
 * child; A's import reaches 9; B1 (1 ms) reaches 2 and 4, B's import (no test id) reaches 8. */
const records = (): Record_[] => [
  {
    files: [A],
    tests: [{ id: A1, file: A, ms: 40, ok: true }, { id: A2, file: A, ms: 5, ok: true }],
    coverage: { static: {}, perTest: { [A1]: { "1": 2, "2": 1 }, [`after › ${A2}`]: { "2": 3 }, [`load › ${A}`]: { "9": 1 }, [A2]: { "7": 0 } } },
    children: [{ testFile: A2, coverage: { static: { "3": 5 }, perTest: {} } }],
  },
  { files: [B], tests: [{ id: B1, file: B, ms: 1, ok: true }], coverage: { static: { "8": 1 }, perTest: { [B1]: { "2": 4, "4": 1 } } } },
];

test("stryker coverage › the map lists, per mutant, the tests that reached it fastest first, and the mutants reached at import", (t) => {
  // Given the records of two files' coverage runs
  // When the map is built
  const map = coverageMap(records());
  // Then each test's file and time are kept, a mutant lists its tests fastest first (work a test left running and its
  // children count for it; a zero count is no hit), in-process hits are summed, and import-time hits make a mutant static
  t.deepEqual(map.tests, { [A1]: { file: A, ms: 40 }, [A2]: { file: A, ms: 5 }, [B1]: { file: B, ms: 1 } });
  t.deepEqual(map.mutants, { "1": { tests: [A1], hits: 2 }, "2": { tests: [B1, A2, A1], hits: 8 }, "3": { tests: [A2], hits: 0 }, "4": { tests: [B1], hits: 1 } });
  t.deepEqual(map.static, { "8": [B], "9": [A] });
});

test("stryker coverage › tests run fastest first, ties by id, tests with no time last", (t) => {
  // Given three timed tests and one with no time
  const tests = { [A1]: { ms: 0.7 }, [A2]: { ms: 11.2 }, [B1]: { ms: 0.7 } };
  const ids = ["test/d.test.ts › x", A2, B1, A1];
  // When / then
  t.deepEqual(fastestFirst(ids, tests), [A1, B1, A2, "test/d.test.ts › x"]);
  t.deepEqual(ids, ["test/d.test.ts › x", A2, B1, A1], "the input is left as it was");
});

test("stryker coverage › each mutant id is tied to the instrumented source that switches or counts it", (t) => {
  // Given two instrumented sources as Stryker writes them
  const sources = {
    "extproc/x.ts": `const a = stryMutAct_9fa48("12") ? 1 : (stryCov_9fa48("12", "13"), 2);`,
    "extproc/y.ts": `function f() { if (stryMutAct_9fa48("14")) {} else { stryCov_9fa48("14"); } }`,
  };
  // When / then
  t.deepEqual(mutantFiles(sources), { "12": "extproc/x.ts", "13": "extproc/x.ts", "14": "extproc/y.ts" });
});

test("stryker coverage › the plan: unreached mutants run nothing, reached ones their tests in a warm worker, static ones a fresh worker", (t) => {
  // Given the map, mutants 1, 2 and 9 in x.ts, 4 and 8 in y.ts, 5 in z.ts
  const map = coverageMap(records());
  const files = { "1": "x.ts", "2": "x.ts", "9": "x.ts", "4": "y.ts", "8": "y.ts", "5": "z.ts" };
  // When / then: a reached mutant runs its tests in a warm worker, with a hit limit of the factor over its hits (a floor)
  t.deepEqual(planFor(map, files, "2"), { kind: "warm", tests: [B1, A2, A1], files: [A, B], hitLimit: 10_000 });
  t.is(HIT_LIMIT_FACTOR, 100);
  // an unreached one runs nothing
  t.deepEqual(planFor(map, files, "5"), { kind: "none" });
  // a static one runs, in a fresh worker, fastest first, tests that together reach every other mutant of its file (1
  // and 2: B1 and A1) and the quickest tests reaching the file at all (B1, A2, A1: all within the budget)
  t.deepEqual(planFor(map, files, "9"), { kind: "fresh", tests: [B1, A2, A1], files: [A, B], hitLimit: 10_000 });
  t.deepEqual(planFor(map, files, "8"), { kind: "fresh", tests: [B1], files: [B], hitLimit: 10_000 });
  // and the quickest tests of the files whose import reached it, within the budget, also when its file has tests of its
  // own (those of 4): A's, for 9 (a constant's users read it where its own file has no test)
  t.deepEqual(planFor(map, { ...files, "9": "y.ts" }, "9"), { kind: "fresh", tests: [B1, A2, A1], files: [A, B], hitLimit: 10_000 });
  // a file no test reaches at run time (constants only) runs every test of the files whose import reached it
  t.deepEqual(planFor(map, { "8": "w.ts" }, "8"), { kind: "fresh", tests: [B1], files: [B], hitLimit: 10_000 });
  t.deepEqual(planFor(map, { "9": "w.ts" }, "9"), { kind: "fresh", tests: [A2, A1], files: [A], hitLimit: 10_000 });
});

test("stryker coverage › a file's cover: few tests that together reach each of its mutants, cheapest reach first", (t) => {
  // Given file f.ts with mutants 1–4: a slow test reaching all four, two quick ones reaching 1–2 and 3, and a quicker
  // one reaching only 1; mutant 9 of another file
  const T = (n: string) => `test/f.test.ts › ${n}`;
  const map: CoverageMap = {
    tests: { [T("slow")]: { file: "test/f.test.ts", ms: 900 }, [T("q12")]: { file: "test/f.test.ts", ms: 10 }, [T("q3")]: { file: "test/f.test.ts", ms: 20 }, [T("q1")]: { file: "test/f.test.ts", ms: 5 } },
    mutants: {
      "1": { tests: [T("q1"), T("q12"), T("slow")], hits: 3 },
      "2": { tests: [T("q12"), T("slow")], hits: 2 },
      "3": { tests: [T("q3"), T("slow")], hits: 2 },
      "4": { tests: [T("slow")], hits: 1 },
      "9": { tests: [T("q1")], hits: 1 },
    },
    static: {},
  };
  const files = { "1": "f.ts", "2": "f.ts", "3": "f.ts", "4": "f.ts", "9": "g.ts" };
  // When / then: q12 (2 new per 11 ms) first, then q3 for 3, then slow, the only test reaching 4; q1 adds nothing new
  t.deepEqual(fileCover(map, files, "f.ts"), [T("q12"), T("q3"), T("slow")]);
  // without mutant 4 the slow test is not needed
  t.deepEqual(fileCover({ ...map, mutants: { ...map.mutants, "4": { tests: [], hits: 0 } } }, files, "f.ts"), [T("q12"), T("q3")]);
  t.deepEqual(fileCover(map, files, "g.ts"), [T("q1")]);
  t.deepEqual(fileCover(map, files, "h.ts"), []);
  t.deepEqual(fileCover(map, files, undefined), []);
});

test("stryker coverage › a file's readers: the quickest tests reaching it, fastest first, within a time budget", (t) => {
  // Given file f.ts reached by q1 (5 ms), q12 (10), q3 (20) and slow (900); g.ts only by q1
  const T = (n: string) => `test/f.test.ts › ${n}`;
  const map: CoverageMap = {
    tests: { [T("slow")]: { file: "test/f.test.ts", ms: 900 }, [T("q12")]: { file: "test/f.test.ts", ms: 10 }, [T("q3")]: { file: "test/f.test.ts", ms: 20 }, [T("q1")]: { file: "test/f.test.ts", ms: 5 } },
    mutants: { "1": { tests: [T("q1"), T("q12"), T("slow")], hits: 3 }, "3": { tests: [T("q3"), T("slow")], hits: 2 }, "9": { tests: [T("q1")], hits: 1 } },
    static: {},
  };
  const files = { "1": "f.ts", "3": "f.ts", "9": "g.ts" };
  // When / then: within 100 ms the three quick ones (35 ms), within 2 s all four; another file's tests never
  t.deepEqual(fileReaders(map, files, "f.ts", 100), [T("q1"), T("q12"), T("q3")]);
  t.deepEqual(fileReaders(map, files, "f.ts", 2000), [T("q1"), T("q12"), T("q3"), T("slow")]);
  t.deepEqual(fileReaders(map, files, "f.ts", 4), []);
  t.deepEqual(fileReaders(map, files, "g.ts"), [T("q1")]);
  t.deepEqual(fileReaders(map, files, undefined), []);
});

test("stryker coverage › a test's timeout is 5 × its unmutated time plus a second", (t) => {
  // Given tests of 2 ms and 4.5 s
  const tests = { [A1]: { ms: 2 }, [A2]: { ms: 4500 } };
  // When / then; a test with no time gets 5 × 15 s + 1 s
  t.is(testTimeoutMs(tests, A1), 1010);
  t.is(testTimeoutMs(tests, A2), 23_500);
  t.is(testTimeoutMs(tests, B1), 76_000);
});

test("stryker coverage › a survivor no test reached becomes no coverage; killed, timed-out and reached ones keep their status", (t) => {
  // Given a report with a reached survivor, an unreached survivor, and unreached killed and timed-out mutants
  const report = { schemaVersion: "2", files: { "extproc/x.ts": { language: "typescript", mutants: [
    { id: "1", status: "Survived" },
    { id: "5", status: "Survived" },
    { id: "6", status: "Killed" },
    { id: "7", status: "Timeout" },
  ] } } };
  const before = JSON.stringify(report);
  // When it is reclassified against the map (which reaches mutant 1, not 5, 6 or 7)
  const out = reclassifyUncovered(report, coverageMap(records()), {});
  // Then only the unreached survivor changes, and the input report is left as it was
  t.deepEqual(out.files["extproc/x.ts"]!.mutants.map((m) => [m.id, m.status]), [["1", "Survived"], ["5", "NoCoverage"], ["6", "Killed"], ["7", "Timeout"]]);
  t.is(JSON.stringify(report), before);
});

test("stryker coverage › the hook writes a process's hit counts at exit, and as it goes for a process ended by a signal", async (t) => {
  // Given a directory for the coverage files and the hook loaded in two node processes that set the coverage global
  const dir = mkdtempSync(join(tmpdir(), "meshext-stryker-cov-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = { ...process.env, NODE_OPTIONS: `--import=${pathToFileURL(join(SCRIPTS, "stryker-coverage-hook.mjs")).href}`, STRYKER_COVERAGE_DIR: dir, STRYKER_COVERAGE_TEST: A };
  const setGlobal = (id: string) => `globalThis.__stryker__ = { mutantCoverage: { static: { "${id}": 1 }, perTest: {} } };`;
  // When one exits normally and the other is killed with SIGTERM once it has saved
  const exited = spawnSync(process.execPath, ["-e", setGlobal("5")], { env });
  t.is(exited.status, 0, String(exited.stderr));
  const killed = spawn(process.execPath, ["-e", `${setGlobal("6")} setInterval(() => {}, 1000);`], { env });
  // (its file appears while it runs: waited for, since a loaded machine may take over a second to start node)
  const savedBy = Date.now() + 30_000;
  while (readdirSync(dir).filter((f) => f.endsWith(".json")).length < 2 && Date.now() < savedBy) await new Promise((r) => setTimeout(r, 50));
  killed.kill("SIGTERM");
  await new Promise((r) => killed.once("exit", r));
  // Then both left their coverage, named by the test
  const written = readdirSync(dir).map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as { testFile: string; coverage: Coverage });
  t.deepEqual(written.map((w) => [w.testFile, Object.keys(w.coverage.static ?? {})]).sort(), [[A, ["5"]], [A, ["6"]]]);
});

test("stryker coverage › given processes killed with SIGKILL while the hook saves, then every coverage file left is whole JSON", async (t) => {
  // Given the hook in processes whose hit counts keep changing and are large (each save takes a while to write)
  const dir = mkdtempSync(join(tmpdir(), "meshext-stryker-kill-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = { ...process.env, NODE_OPTIONS: `--import=${pathToFileURL(join(SCRIPTS, "stryker-coverage-hook.mjs")).href}`, STRYKER_COVERAGE_DIR: dir, STRYKER_COVERAGE_TEST: A };
  const busy = `const s = {}; for (let i = 0; i < 300000; i++) s[i] = 1; globalThis.__stryker__ = { mutantCoverage: { static: s, perTest: {} } }; let n = 0; setInterval(() => { s[n++ % 300000]++; }, 1);`;
  // When each is killed as soon as the directory changes after its first save: while a later save is being written
  for (let i = 0; i < 5; i++) {
    const child = spawn(process.execPath, ["-e", busy], { env, stdio: "ignore" });
    let events = 0;
    const watcher = watch(dir, () => {
      if (++events === 3 + i) child.kill("SIGKILL");
    });
    await new Promise((r) => child.once("exit", r));
    watcher.close();
  }
  // Then the files the coverage pass reads (<pid>.json) all parse; a cut save can only be a .tmp file
  const files = readdirSync(dir).filter((f) => f.endsWith(".json"));
  t.true(files.length >= 1, `saved: ${readdirSync(dir).join(" ")}`);
  for (const f of files) t.notThrows(() => JSON.parse(readFileSync(join(dir, f), "utf8")), f);
});

test("stryker coverage › the dispatcher exits 0 at once, starting nothing, for a mutant no test reached", (t) => {
  // Given a sandbox whose coverage map reaches mutant 1 only
  const sandbox = mkdtempSync(join(tmpdir(), "meshext-stryker-sandbox-"));
  t.teardown(() => rmSync(sandbox, { recursive: true, force: true }));
  mkdirSync(join(sandbox, ".stryker-coverage"));
  const map = { tests: { [A1]: { file: A, ms: 1 } }, mutants: { "1": { tests: [A1], hits: 1 } }, static: [] };
  writeFileSync(join(sandbox, ".stryker-coverage", "map.json"), JSON.stringify({ area: "admin", tests: [A], concurrency: 1, map, files: { "1": "x.ts", "2": "x.ts" } }));
  writeFileSync(join(sandbox, ".stryker-coverage", "planned.json"), JSON.stringify(["1"]));
  // When the dispatcher runs for mutant 2 (no daemon could start here: the sandbox has no scripts)
  const started = Date.now();
  const r = spawnSync(process.execPath, [join(SCRIPTS, "stryker-dispatch.mjs"), "admin"], { cwd: sandbox, env: { ...process.env, __STRYKER_ACTIVE_MUTANT__: "2" }, encoding: "utf8", timeout: 60_000 });
  // Then it says it survived, at once, without a daemon
  t.is(r.status, 0, r.stderr);
  t.is(r.stdout.trim(), "mutant 2: survived (no test reaches it)");
  t.true(Date.now() - started < 5000);
  t.false(existsSync(join(sandbox, ".stryker-coverage", "daemon.lock")));
});

test.serial("stryker coverage › given a hook in NODE_OPTIONS, when the test helpers start a sidecar and a control plane, then both children load it", async (t) => {
  t.timeout(60_000);
  // Given a probe module, loaded like scripts/stryker-coverage-hook.mjs through the test process's NODE_OPTIONS, that
  // records each node process it is loaded into (the unmutated build has no __stryker__ global for the real hook)
  const dir = mkdtempSync(join(tmpdir(), "meshext-stryker-hook-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const probe = join(dir, "probe.mjs");
  writeFileSync(probe, `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(dir)} + "/" + process.pid + ".argv", JSON.stringify(process.argv.slice(2)));\n`);
  const before = process.env.NODE_OPTIONS;
  process.env.NODE_OPTIONS = `${before ?? ""} --import=${pathToFileURL(probe).href}`.trim();
  t.teardown(() => (before === undefined ? delete process.env.NODE_OPTIONS : (process.env.NODE_OPTIONS = before)));
  // When the helpers the push tests use start the real binaries
  const { controlPlaneChild } = await import("../control-plane/pushing-mesh.js");
  const { startChildSidecar } = await import("../helpers/child-sidecar.js");
  const { freePort } = await import("../helpers/prometheus.js");
  const cp = await controlPlaneChild(t);
  t.teardown(() => cp.stop());
  const sidecar = await startChildSidecar(await freePort(), await freePort());
  t.teardown(() => void sidecar.kill("SIGKILL"));
  // Then each child ran the probe: the control plane and the sidecar are both among the processes it saw
  const commands = readdirSync(dir).filter((f) => f.endsWith(".argv")).map((f) => (JSON.parse(readFileSync(join(dir, f), "utf8")) as string[])[0]);
  t.true(commands.includes("control-plane"), `probed: ${JSON.stringify(commands)}`);
  t.true(commands.includes("sidecar"), `probed: ${JSON.stringify(commands)}`);
});

test("stryker coverage › no test file or helper replaces NODE_OPTIONS with the shipped one: children get it through sidecarEnv", (t) => {
  // Given every TypeScript file under test/ but the helper that appends the shipped flags
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith(".ts")) files.push(join(d, e.name));
    }
  };
  walk(join(process.cwd(), "test"));
  // When they are searched for an environment that spreads SIDECAR_ENV over process.env (its NODE_OPTIONS drops the hook)
  const offenders = files.filter((f) => !f.endsWith("sidecar-env.ts") && /\.\.\.process\.env\s*,\s*\.\.\.SIDECAR_ENV\b/.test(readFileSync(f, "utf8")));
  // Then none does
  t.deepEqual(offenders, []);
  t.true(files.length > 50, `found ${files.length} files`);
});
