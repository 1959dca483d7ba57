// Per-test-file coverage for `npm run mutation:stryker` (scripts/stryker-coverage.mjs, -hook.mjs, -dispatch.mjs):
// the map from the coverage pass, the files the dispatcher runs per mutant, and survivors no file reached counted as no coverage.
import test from "ava";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, watch, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const SCRIPTS = join(process.cwd(), "scripts");
type Map = Record<string, string[]>;
type Coverage = { static?: Record<string, number>; perTest?: Record<string, Record<string, number>> };
type Report = { files: Record<string, { mutants: { id: string; status: string }[] }> };
const { coverageMap, testsFor, reclassifyUncovered, avaTimeoutSeconds, fastestFirst } = (await import(pathToFileURL(join(SCRIPTS, "stryker-coverage.mjs")).href)) as {
  fastestFirst: (files: string[], seconds: Record<string, number>) => string[];
  coverageMap: (records: { testFile: string; coverage?: Coverage }[]) => Map;
  testsFor: (map: Map, areaTests: string[], activeMutant: string | undefined) => string[];
  reclassifyUncovered: (report: Report, map: Map) => Report;
  avaTimeoutSeconds: (seconds: Record<string, number>, files: string[]) => number;
};

const A = "test/a.test.ts";
const B = "test/b.test.ts";

test("stryker coverage › the map lists, per mutant, every test file whose processes reached it", (t) => {
  // Given file A reaching mutants 1 and 2 (2 at import time, in two of its processes) and file B reaching 2 and 10
  const records: { testFile: string; coverage?: Coverage }[] = [
    { testFile: A, coverage: { static: { "2": 1, "1": 3 }, perTest: {} } },
    { testFile: A, coverage: { static: { "2": 1 }, perTest: {} } },
    { testFile: B, coverage: { static: { "10": 1 }, perTest: { "some test": { "2": 4 } } } },
    { testFile: B, coverage: { static: { "7": 0 } } },
    { testFile: B },
  ];
  // When the map is built
  const map = coverageMap(records);
  // Then a mutant reached by both files (a static one too) lists both once, a zero count is no hit, order is by id
  t.deepEqual(map, { "1": [A], "2": [A, B], "10": [B] });
  t.deepEqual(Object.keys(map), ["1", "2", "10"]);
});

test("stryker coverage › the dispatcher runs the covering files for a mutant, none for an unreached one, all in the dry run", (t) => {
  // Given a map and an area of three files
  const map = { "1": [A], "2": [A, B] };
  const area = [A, B, "test/c.test.ts"];
  // When / then: a reached mutant runs its files only; an unreached one runs nothing
  t.deepEqual(testsFor(map, area, "1"), [A]);
  t.deepEqual(testsFor(map, area, "2"), [A, B]);
  t.deepEqual(testsFor(map, area, "3"), []);
  // and with no active mutant (Stryker's dry run) every file of the area runs
  t.deepEqual(testsFor(map, area, undefined), area);
  t.deepEqual(testsFor(map, area, ""), area);
});

test("stryker coverage › a mutant's AVA timeout is 3 × its slowest covering file's unmutated run, at least 20 s", (t) => {
  // Given the coverage pass's times: A 0.7 s, B 11.2 s
  const seconds = { [A]: 0.7, [B]: 11.2 };
  // When / then: B's run may stall 34 s, A's the 20 s floor, both B's; a file with no time gets 3 × 20 s
  t.is(avaTimeoutSeconds(seconds, [B]), 34);
  t.is(avaTimeoutSeconds(seconds, [A]), 20);
  t.is(avaTimeoutSeconds(seconds, [A, B]), 34);
  t.is(avaTimeoutSeconds(seconds, ["test/new.test.ts"]), 60);
});

test("stryker coverage › a mutant's covering files run fastest first, ties by name, files with no time last", (t) => {
  // Given B took 11.2 s, A and C 0.7 s each in the coverage pass, and D has no time
  const seconds = { [A]: 0.7, [B]: 11.2, "test/c.test.ts": 0.7 };
  const files = ["test/d.test.ts", B, "test/c.test.ts", A];
  // When / then
  t.deepEqual(fastestFirst(files, seconds), [A, "test/c.test.ts", B, "test/d.test.ts"]);
  t.deepEqual(files, ["test/d.test.ts", B, "test/c.test.ts", A], "the input is left as it was");
});

test("stryker coverage › a survivor no file reached becomes no coverage; killed, timed-out and reached ones keep their status", (t) => {
  // Given a report with a reached survivor, an unreached survivor, and unreached killed and timed-out mutants
  const report = { schemaVersion: "2", files: { "extproc/x.ts": { language: "typescript", mutants: [
    { id: "1", status: "Survived" },
    { id: "2", status: "Survived" },
    { id: "3", status: "Killed" },
    { id: "4", status: "Timeout" },
  ] } } };
  const before = JSON.stringify(report);
  // When it is reclassified against a map that reaches only mutant 1
  const out = reclassifyUncovered(report, { "1": [A], "2": [] });
  // Then only the unreached survivor changes, and the input report is left as it was
  t.deepEqual(out.files["extproc/x.ts"]!.mutants.map((m) => [m.id, m.status]), [["1", "Survived"], ["2", "NoCoverage"], ["3", "Killed"], ["4", "Timeout"]]);
  t.is(JSON.stringify(report), before);
});

test("stryker coverage › the hook writes a process's hit counts at exit, and as it goes for a process ended by a signal", async (t) => {
  // Given a directory for the coverage files and the hook loaded in two node processes that set the coverage global
  const dir = mkdtempSync(join(tmpdir(), "meshext-stryker-cov-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = { ...process.env, NODE_OPTIONS: `--import=${pathToFileURL(join(SCRIPTS, "stryker-coverage-hook.mjs")).href}`, STRYKER_COVERAGE_DIR: dir, STRYKER_COVERAGE_TEST: A };
  const setGlobal = (id: string) => `globalThis.__stryker__ = { mutantCoverage: { static: { "${id}": 1 }, perTest: {} } };`;
  // When one exits normally and the other is killed with SIGTERM after a second
  const exited = spawnSync(process.execPath, ["-e", setGlobal("5")], { env });
  t.is(exited.status, 0, String(exited.stderr));
  const killed = spawn(process.execPath, ["-e", `${setGlobal("6")} setInterval(() => {}, 1000);`], { env });
  await new Promise((r) => setTimeout(r, 1000));
  killed.kill("SIGTERM");
  await new Promise((r) => killed.once("exit", r));
  // Then both left their coverage, named by the test file
  const written = readdirSync(dir).map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")));
  t.deepEqual(coverageMap(written), { "5": [A], "6": [A] });
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

test("stryker coverage › the dispatcher exits 0 at once, running nothing, for a mutant no test file reached", (t) => {
  // Given a sandbox whose coverage map reaches mutant 1 only
  const sandbox = mkdtempSync(join(tmpdir(), "meshext-stryker-sandbox-"));
  t.teardown(() => rmSync(sandbox, { recursive: true, force: true }));
  mkdirSync(join(sandbox, ".stryker-coverage"));
  writeFileSync(join(sandbox, ".stryker-coverage", "map.json"), JSON.stringify({ map: { "1": ["test/admin/access.test.ts"] }, seconds: {} }));
  // When the dispatcher runs for mutant 2 (no node_modules here: running AVA would fail)
  const started = Date.now();
  const r = spawnSync(process.execPath, [join(SCRIPTS, "stryker-dispatch.mjs"), "admin"], { cwd: sandbox, env: { ...process.env, __STRYKER_ACTIVE_MUTANT__: "2" }, encoding: "utf8" });
  // Then it exits 0 without starting AVA
  t.is(r.status, 0, r.stderr);
  t.true(Date.now() - started < 5000);
  // And for mutant 1 it does try to run the covering file (and fails here, with no AVA in the sandbox)
  const covered = spawnSync(process.execPath, [join(SCRIPTS, "stryker-dispatch.mjs"), "admin"], { cwd: sandbox, env: { ...process.env, __STRYKER_ACTIVE_MUTANT__: "1" }, encoding: "utf8" });
  t.not(covered.status, 0);
  t.regex(covered.stderr, /ava/);
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
