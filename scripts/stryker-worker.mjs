// A process of the in-process mutation harness (cwd: Stryker's sandbox). It imports an area's compiled test files once,
// with `ava` answered by scripts/stryker-ava-shim.mjs, and then runs single tests by id under a chosen mutant, switching
// Stryker's active mutant at run time instead of starting a process per mutant.
// Two modes:
//   node --import=./scripts/stryker-ava-loader.mjs scripts/stryker-worker.mjs --coverage OUT FILE…
//     runs every test of the files one at a time, unmutated, each under its own Stryker test id, and writes to OUT the
//     hit counts per test (its own and those of the node processes the test starts, which load
//     scripts/stryker-coverage-hook.mjs), each test's time and result, and the hits while the files were imported.
//   (forked, with an IPC channel) FILE…   serves { id, mutant, tests, hitLimit } messages from scripts/stryker-daemon.mjs.
//   (forked) --lazy FILE…   the same, but imports each file only when a test of it is about to run (a worker started
//     with an import-time mutant on: a kill by the first file's test spares importing the others).
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { executionContext, loadingTestFile, registered } from "./stryker-ava-shim.mjs";

// Stryker's namespace object: the instrumented modules keep a reference to it, so it is only ever mutated, never replaced.
const ns = (globalThis.__stryker__ ??= {});
ns.mutantCoverage ??= { static: {}, perTest: {} };
const ACTIVE_MUTANT_ENV = "__STRYKER_ACTIVE_MUTANT__";

/** The compiled file AVA runs for a test file (package.json rewritePaths: test/ → dist/test/, .ts → .js). */
export const compiledTestFile = (file) => resolve(file.replace(/^test\//, "dist/test/").replace(/\.ts$/, ".js"));
export const testId = (file, title) => `${file} › ${title}`;

// An error no test caught (AVA fails the file for one): it fails the test running, or spoils the process between runs.
let onFault;
let faultBetweenRuns;
const fault = (error) => {
  if (onFault) onFault(error);
  else faultBetweenRuns ??= error;
};
process.on("uncaughtException", fault);
process.on("unhandledRejection", fault);

async function importFiles(files) {
  for (const file of files) {
    loadingTestFile(file);
    ns.currentTestId = `load › ${file}`;
    await import(pathToFileURL(compiledTestFile(file)).href);
  }
  loadingTestFile(undefined);
  ns.currentTestId = undefined;
}

const byId = () => new Map(registered.map((r) => [testId(r.file, r.title), r]));

/** Runs one registered test: { ok, message, ms }. A test that asserts nothing fails, as in AVA. */
async function runTest(entry, timeoutMs) {
  const started = performance.now();
  const { t, assertionCount, tearDown } = executionContext(entry.title);
  let timer;
  const outcome = await new Promise((settle) => {
    onFault = (error) => settle({ ok: false, message: `uncaught: ${error?.stack ?? error}` });
    timer = setTimeout(() => settle({ ok: false, timedOut: true, message: `timed out after ${timeoutMs} ms` }), timeoutMs);
    Promise.resolve()
      .then(() => entry.exec(t))
      .then(
        () => settle(assertionCount() > 0 ? { ok: true } : { ok: false, message: "Test finished without running any assertions" }),
        (error) => settle({ ok: false, message: String(error?.message ?? error) }),
      );
  });
  clearTimeout(timer);
  // Teardowns get the test's time again; one that hangs (a server closing on a connection a mutant left open)
  // leaves this process unfit for further runs.
  let hung;
  const tornDown = new Promise((settle) => {
    hung = setTimeout(() => settle(new Error(`teardown hung for ${timeoutMs} ms`)), timeoutMs);
    tearDown().then(() => settle(undefined), settle);
  });
  const teardownError = await tornDown;
  clearTimeout(hung);
  if (teardownError?.message?.startsWith("teardown hung")) faultBetweenRuns ??= teardownError;
  if (teardownError && outcome.ok) Object.assign(outcome, { ok: false, message: `teardown: ${teardownError?.message ?? teardownError}` });
  onFault = undefined;
  return { ...outcome, ms: performance.now() - started };
}

function setMutant(mutant, hitLimit) {
  ns.activeMutant = mutant;
  ns.hitCount = mutant === undefined || hitLimit === undefined ? undefined : 0;
  ns.hitLimit = hitLimit;
  if (mutant === undefined) delete process.env[ACTIVE_MUTANT_ENV];
  else process.env[ACTIVE_MUTANT_ENV] = mutant;
}

async function coverage(out, files) {
  const childDir = resolve(`${out}.children`);
  mkdirSync(childDir, { recursive: true });
  const hook = pathToFileURL(resolve("scripts/stryker-coverage-hook.mjs")).href;
  // The node processes tests start load the hook, which writes their hits under the running test's id.
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} --import=${hook}`.trim();
  process.env.STRYKER_COVERAGE_DIR = childDir;
  await importFiles(files);
  const tests = [];
  for (const entry of registered) {
    const id = testId(entry.file, entry.title);
    ns.currentTestId = id;
    process.env.STRYKER_COVERAGE_TEST = id;
    const result = await runTest(entry, 120_000);
    // Work a test leaves running (timers, closing sockets) counts as that test's, not as import-time.
    ns.currentTestId = `after › ${id}`;
    tests.push({ id, file: entry.file, title: entry.title, ms: Math.round(result.ms * 10) / 10, ok: result.ok, message: result.message });
  }
  await new Promise((r) => setTimeout(r, 600)); // the children's last 250 ms saves
  const children = readdirSync(childDir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(readFileSync(join(childDir, f), "utf8")));
  writeFileSync(out, JSON.stringify({ files, tests, coverage: ns.mutantCoverage, children }));
  process.exit(0);
}

const fileOf = (id) => id.slice(0, id.indexOf(" › "));

async function serve(files, lazy) {
  const imported = new Set(lazy ? [] : files);
  if (!lazy) await importFiles(files);
  let tests = byId();
  process.on("message", async ({ id, mutant, tests: ids, hitLimit, timeoutsMs }) => {
    if (faultBetweenRuns) {
      process.send({ id, spoiled: `between runs: ${faultBetweenRuns?.stack ?? faultBetweenRuns}` });
      return;
    }
    const unknown = ids.filter((t) => !tests.has(t) && (imported.has(fileOf(t)) || !files.includes(fileOf(t))));
    if (unknown.length > 0) {
      process.send({ id, error: `unknown test ids: ${unknown.slice(0, 3).join(", ")}` });
      return;
    }
    setMutant(mutant, hitLimit);
    let failed;
    let ran = 0;
    for (const [i, t] of ids.entries()) {
      if (!imported.has(fileOf(t))) {
        imported.add(fileOf(t));
        try {
          await importFiles([fileOf(t)]);
        } catch (error) {
          failed = { test: t, message: `${fileOf(t)} failed to import with the mutant on: ${error?.message ?? error}`, timedOut: false };
          break;
        }
        tests = byId();
        if (!tests.has(t)) {
          process.send({ id, error: `unknown test id: ${t}` });
          return;
        }
      }
      const result = await runTest(tests.get(t), timeoutsMs[i]);
      ran++;
      if (!result.ok) {
        failed = { test: t, message: result.message, timedOut: Boolean(result.timedOut) };
        break;
      }
    }
    // How often the mutant's code ran in this process (Stryker counts it against the hit limit): 0 on a warm worker
    // means state kept from earlier runs (a module-level memo) kept the planned tests from reaching it.
    const hits = ns.hitCount;
    setMutant(undefined);
    // A kill is only believed when the killing test passes again right after with no mutant: otherwise an earlier
    // mutant (or this one) left this process's state spoiled, and the daemon re-runs the mutant in a fresh process.
    let cleanAfter = true;
    if (failed && tests.has(failed.test)) cleanAfter = (await runTest(tests.get(failed.test), timeoutsMs[ids.indexOf(failed.test)])).ok;
    process.send({ id, killed: Boolean(failed), failed, ran, hits, cleanAfter: cleanAfter && !faultBetweenRuns });
  });
  process.send({ ready: registered.length });
}

// A test file that fails to import (a missing fixture, a throw at its top level) must fail loudly: the fault
// handlers above would otherwise swallow the rejection and the process would exit 0 having done nothing.
const args = process.argv.slice(2);
try {
  if (args[0] === "--coverage") await coverage(args[1], args.slice(2));
  else if (args[0] === "--lazy") await serve(args.slice(1), true);
  else await serve(args, false);
} catch (error) {
  process.stderr.write(`stryker-worker: ${error?.stack ?? error}\n`);
  process.exit(1);
}
