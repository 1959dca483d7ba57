// The in-process mutation harness of `npm run mutation:stryker`: its AVA stand-in (scripts/stryker-ava-shim.mjs) and,
// in a scratch sandbox with a hand-instrumented module, the coverage pass, the daemon and the dispatcher together.
import test from "ava";
import { fork, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const SCRIPTS = join(process.cwd(), "scripts");
type Context = { t: Record<string, (...args: unknown[]) => unknown>; assertionCount: () => number; tearDown: () => Promise<void> };
const shim = (await import(pathToFileURL(join(SCRIPTS, "stryker-ava-shim.mjs")).href)) as {
  deepEqual: (a: unknown, b: unknown) => boolean;
  isLike: (a: unknown, b: unknown) => boolean;
  executionContext: (title: string) => Context;
  AssertionFailed: new () => Error;
};
const { coverageMap, mutantFiles, planFor } = (await import(pathToFileURL(join(SCRIPTS, "stryker-coverage.mjs")).href)) as {
  coverageMap: (records: unknown[]) => { static: Record<string, string[]>; mutants: Record<string, { tests: string[]; hits: number }> };
  mutantFiles: (sources: Record<string, string>) => Record<string, string>;
  planFor: (map: unknown, files: Record<string, string>, mutant: string) => { kind: string };
};

test("stryker harness › deep equality is AVA's: types, prototypes, key sets, Map and Set order", (t) => {
  // Given pairs AVA calls equal and pairs it does not
  const equal: [unknown, unknown][] = [[{ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }], [new Map([["x", 1]]), new Map([["x", 1]])], [NaN, NaN], [new Date(5), new Date(5)], [/a/g, /a/g]];
  const different: [unknown, unknown][] = [
    [{ a: undefined }, {}],
    [[1, 2], [2, 1]],
    [new Set([1, 2]), new Set([2, 1])],
    [1, "1"],
    [[], {}],
    [Object.create(null), {}],
    [-0, 0],
    [new Error("a"), new Error("b")],
    [/a/g, /a/i],
  ];
  // When / then
  for (const [a, b] of equal) t.true(shim.deepEqual(a, b), `${JSON.stringify(a)} = ${JSON.stringify(b)}`);
  for (const [a, b] of different) t.false(shim.deepEqual(a, b), `${JSON.stringify(a)} ≠ ${JSON.stringify(b)}`);
});

test("stryker harness › like compares only the selector's properties, arrays by length and element", (t) => {
  // Given an object with more properties than its selector names
  const actual = { a: 1, b: { c: 2, d: 3 }, list: [{ x: 1, y: 2 }] };
  // When / then
  t.true(shim.isLike(actual, { b: { c: 2 }, list: [{ x: 1 }] }));
  t.false(shim.isLike(actual, { b: { c: 3 } }));
  t.false(shim.isLike(actual, { list: [{ x: 1 }, { x: 1 }] }));
  t.false(shim.isLike(actual, { e: undefined }));
});

test("stryker harness › a failed assertion throws, throws() checks its expectation, teardowns run last first", async (t) => {
  // Given an execution context
  const { t: ctx, assertionCount, tearDown } = shim.executionContext("a test");
  // When assertions pass and fail
  ctx.is!(1, 1);
  t.throws(() => ctx.is!(1, 2), { instanceOf: shim.AssertionFailed, message: "1 is not 2" });
  t.throws(() => ctx.deepEqual!({ a: 1 }, { a: 2 }), { instanceOf: shim.AssertionFailed });
  const error = ctx.throws!(() => {
    throw new TypeError("bad input");
  }, { instanceOf: TypeError, message: /bad/ }) as Error;
  t.throws(() => ctx.throws!(() => {}, undefined), { message: "did not throw" });
  t.throws(() => ctx.throws!(() => { throw new Error("other"); }, { message: "bad input" }), { instanceOf: shim.AssertionFailed });
  await t.throwsAsync(async () => ctx.throwsAsync!(Promise.resolve(1), undefined), { message: "did not reject" });
  // Then each assertion counted (the failed ones too), throws() returned the error
  t.is(error.message, "bad input");
  t.is(assertionCount(), 7);
  // And the teardowns run in reverse order
  const order: number[] = [];
  ctx.teardown!(() => order.push(1));
  ctx.teardown!(async () => order.push(2));
  await tearDown();
  t.deepEqual(order, [2, 1]);
});

// Stryker's switching and coverage functions, as its instrumenter puts them atop each module.
const STRYKER_PRELUDE = `
const ns = (globalThis.__stryker__ ??= {});
if (ns.activeMutant === undefined && process.env.__STRYKER_ACTIVE_MUTANT__) ns.activeMutant = process.env.__STRYKER_ACTIVE_MUTANT__;
function stryCov_9fa48(...ids) {
  const c = (ns.mutantCoverage ??= { static: {}, perTest: {} });
  const bucket = ns.currentTestId ? (c.perTest[ns.currentTestId] ??= {}) : c.static;
  for (const id of ids) bucket[id] = (bucket[id] ?? 0) + 1;
}
function stryMutAct_9fa48(id) {
  if (ns.activeMutant !== id) return false;
  if (ns.hitCount !== undefined && ++ns.hitCount > ns.hitLimit) throw new Error("Stryker: Hit count limit reached");
  return true;
}
`;

// A module instrumented by hand the way Stryker does it: mutant 1 at import time, 2 and 3 (3 equivalent) in add,
// 4 hangs a promise, 5 caches a wrong value (and so spoils the process), 6 is a no-op beside it, 7 an endless loop.
const FAKE_MODULE = `${STRYKER_PRELUDE}stryCov_9fa48("1");
export const LIMIT = stryMutAct_9fa48("1") ? 0 : 10;
export function add(a, b) { stryCov_9fa48("2", "3"); return stryMutAct_9fa48("2") ? a - b : stryMutAct_9fa48("3") ? b + a : a + b; }
export function later() { stryCov_9fa48("4"); return stryMutAct_9fa48("4") ? new Promise(() => {}) : Promise.resolve(1); }
let cache;
export function cached() { stryCov_9fa48("5", "6"); return (cache ??= stryMutAct_9fa48("5") ? "bad" : stryMutAct_9fa48("6") ? "good" : "good"); }
export function count(n) { let i = 0; while (stryMutAct_9fa48("7") ? true : (stryCov_9fa48("7"), i < n)) i++; return i; }
`;
const FAKE_TESTS = `
import test from "ava";
import { LIMIT, add, later, cached, count } from "../../lib/fake.js";
test("limit", (t) => t.is(LIMIT, 10));
test("add", (t) => t.is(add(2, 3), 5));
test("later", async (t) => t.is(await later(), 1));
test("cached", (t) => t.is(cached(), "good"));
test("count", (t) => t.is(count(3), 3));
`;

type Verdict = { status: number | null; line: string; stderr: string };

/** A sandbox with the scripts, a hand-instrumented lib/fake.js and its test file, after the coverage pass: the
 * coverage record, and the verdict of one mutant as the dispatcher Stryker runs prints it. */
function harnessSandbox(t: { teardown: (fn: () => void) => void }, moduleSource: string, testsSource: string, concurrency: number) {
  const sandbox = mkdtempSync(join(tmpdir(), "meshext-stryker-harness-"));
  t.teardown(() => rmSync(sandbox, { recursive: true, force: true })); // the daemon exits when its sandbox is gone
  symlinkSync(SCRIPTS, join(sandbox, "scripts"), "dir");
  mkdirSync(join(sandbox, "lib"));
  mkdirSync(join(sandbox, "dist", "test"), { recursive: true });
  mkdirSync(join(sandbox, ".stryker-coverage"));
  writeFileSync(join(sandbox, "lib", "fake.js"), moduleSource);
  writeFileSync(join(sandbox, "dist", "test", "fake.test.js"), testsSource);
  const testFile = "test/fake.test.ts";
  // The coverage pass runs the file, and the map is written as the build step writes it
  const out = join(sandbox, ".stryker-coverage", "0.json");
  const pass = spawnSync(process.execPath, ["--import=./scripts/stryker-ava-loader.mjs", "scripts/stryker-worker.mjs", "--coverage", out, testFile], { cwd: sandbox, encoding: "utf8" });
  if (pass.status !== 0) throw new Error(`coverage pass: ${pass.stderr}`);
  const record = JSON.parse(readFileSync(out, "utf8")) as { tests: { title: string; ok: boolean }[] };
  const map = coverageMap([record]);
  const files = mutantFiles({ "lib/fake.js": moduleSource });
  writeFileSync(join(sandbox, ".stryker-coverage", "map.json"), JSON.stringify({ area: "admin", tests: [testFile], concurrency, map, files }));
  writeFileSync(join(sandbox, ".stryker-coverage", "planned.json"), JSON.stringify(Object.keys(files).filter((id) => planFor(map, files, id).kind !== "none")));
  const verdict = (mutant: string): Verdict => {
    const r = spawnSync(process.execPath, ["scripts/stryker-dispatch.mjs", "admin"], { cwd: sandbox, env: { ...process.env, __STRYKER_ACTIVE_MUTANT__: mutant }, encoding: "utf8", timeout: 120_000 });
    return { status: r.status, line: r.stdout.trim(), stderr: r.stderr + r.stdout };
  };
  return { sandbox, record, map, verdict };
}

test("stryker harness › given a sandbox, then each mutant's verdict: static, warm, equivalent, hung, spoiling, endless, unreached", async (t) => {
  // Given a sandbox with the scripts, the hand-instrumented module and its test file, after the coverage pass
  const { sandbox, record, map, verdict } = harnessSandbox(t, FAKE_MODULE, FAKE_TESTS, 1);
  t.deepEqual(record.tests.map((r) => [r.title, r.ok]), [["limit", true], ["add", true], ["later", true], ["cached", true], ["count", true]]);
  t.deepEqual(map.static, { "1": ["test/fake.test.ts"] });
  // Then the import-time mutant is killed in a fresh worker started with it on
  const v1 = verdict("1");
  t.is(v1.status, 1, v1.stderr);
  t.regex(v1.line, /^mutant 1: killed by test\/fake\.test\.ts › limit \(static, fresh worker\)/);
  // a mutant a test sees is killed in the warm worker, by the test that reaches it
  t.regex(verdict("2").line, /^mutant 2: killed by test\/fake\.test\.ts › add \(warm worker\): -1 is not 5/);
  // an equivalent one survives
  t.like(verdict("3"), { status: 0, line: "mutant 3: survived (warm worker)" });
  // a hung test is a kill, by its timeout, and the worker goes on serving
  t.regex(verdict("4").line, /^mutant 4: killed by test\/fake\.test\.ts › later \(warm worker, test timed out\)/);
  // a mutant that spoils the process's state is killed, and the next mutant does not inherit the spoiled state
  t.regex(verdict("5").line, /^mutant 5: killed by test\/fake\.test\.ts › cached \(fresh worker\)/);
  t.like(verdict("6"), { status: 0, line: "mutant 6: survived (warm worker)" });
  // an endless loop stops at the hit limit
  t.regex(verdict("7").line, /^mutant 7: killed by test\/fake\.test\.ts › count \(warm worker\): Stryker: Hit count limit reached/);
  // and a mutant no test reaches survives at once
  t.like(verdict("99"), { status: 0, line: "mutant 99: survived (no test reaches it)" });
  // And the per-mutant command Stryker runs (bash, over the daemon's TCP port) gives the same verdicts
  t.true(existsSync(join(sandbox, ".stryker-coverage", "daemon.port")), "the daemon wrote its TCP port");
  const ask = (mutant: string) => spawnSync("bash", ["scripts/stryker-ask.sh", "admin"], { cwd: sandbox, env: { ...process.env, __STRYKER_ACTIVE_MUTANT__: mutant }, encoding: "utf8", timeout: 120_000 });
  t.like(ask("2"), { status: 1, stdout: 'mutant 2: {"killed":true,"how":"warm worker","test":"test/fake.test.ts › add","message":"-1 is not 5"}\n' });
  t.like(ask("3"), { status: 0, stdout: 'mutant 3: {"killed":false,"how":"warm worker"}\n' });
  t.like(ask("99"), { status: 0, stdout: 'mutant 99: {"killed":false,"how":"no test reaches it"}\n' });
  const log = readFileSync(join(sandbox, ".stryker-coverage", "daemon.log"), "utf8");
  t.regex(log, /mutant 5: test\/fake\.test\.ts › cached also fails unmutated after it; worker replaced, run again/);
});

// A memo filled by the first call: Stryker's coverage credits only the test that filled it (the right side of ??= runs
// once), so a warm worker that ran that test before holds the memo and never runs mutant 8 or 9 again.
const MEMO_MODULE = `${STRYKER_PRELUDE}let memo;
export function greeting() { return (memo ??= (stryCov_9fa48("8", "9"), stryMutAct_9fa48("8") ? "bad" : stryMutAct_9fa48("9") ? "good" : "good")); }
`;
const MEMO_TESTS = `
import test from "ava";
import { greeting } from "../../lib/fake.js";
test("first", (t) => t.is(greeting(), "good"));
test("again", (t) => t.is(greeting(), "good"));
`;

test("stryker harness › a survivor whose code a warm worker never ran (a memo an earlier run filled) runs again in a worker started with it on", async (t) => {
  // Given one warm worker (concurrency 0) and a memo only the "first" test reaches in the coverage pass
  const { map, verdict } = harnessSandbox(t, MEMO_MODULE, MEMO_TESTS, 0);
  t.deepEqual(map.mutants["8"].tests, ["test/fake.test.ts › first"]);
  // When the equivalent mutant 9 runs first, then it reaches its code in the warm worker and survives there (the memo is now filled)
  t.like(verdict("9"), { status: 0, line: "mutant 9: survived (warm worker)" });
  // When mutant 8 runs next in that worker, its code is not reached there; then a fresh worker with it on kills it
  const v8 = verdict("8");
  t.is(v8.status, 1, v8.stderr);
  t.regex(v8.line, /^mutant 8: killed by test\/fake\.test\.ts › first \(not reached in a warm worker, fresh worker\): "bad" is not "good"$/);
  // And mutant 9 asked again also runs fresh, and still survives
  t.like(verdict("9"), { status: 0, line: "mutant 9: survived (not reached in a warm worker, fresh worker)" });
});

/** A memo by name: each name's greeting is worked out once (mutant 8 spoils it, 9 is equivalent). */
const MEMO_BY_NAME_MODULE = `${STRYKER_PRELUDE}const memo = new Map();
export function greet(name) {
  if (!memo.has(name)) memo.set(name, (stryCov_9fa48("8", "9"), stryMutAct_9fa48("8") ? "bad " : stryMutAct_9fa48("9") ? "good " : "good ") + name);
  return memo.get(name);
}
`;
/** "checked" reads one name's greeting; "fresh name" greets a new name on every run and checks nothing about it. */
const MEMO_BY_NAME_TESTS = `
import test from "ava";
import { greet } from "../../lib/fake.js";
let runs = 0;
test("checked", (t) => t.is(greet("ann"), "good ann"));
test("fresh name", (t) => t.truthy(greet("n" + runs++)));
`;

test("stryker harness › a survivor whose code a warm worker ran less often than the coverage pass (a memo filled for some inputs) runs again in a worker started with it on", async (t) => {
  // Given one warm worker and a memo by name: the coverage pass counts one hit for each of the two tests
  const { map, verdict } = harnessSandbox(t, MEMO_BY_NAME_MODULE, MEMO_BY_NAME_TESTS, 0);
  t.deepEqual([...map.mutants["8"]!.tests].sort(), ["test/fake.test.ts › checked", "test/fake.test.ts › fresh name"]);
  t.is(map.mutants["8"]!.hits, 2);
  // When the equivalent mutant 9 runs first (it fills the memo for "ann"), and then mutant 8 in the same worker, where
  // only the new name reaches its code and nothing checks that greeting
  verdict("9");
  const v8 = verdict("8");
  // Then a worker started with 8 on runs "checked" again, works out "ann" with the mutant on, and kills it
  t.is(v8.status, 1, v8.stderr);
  t.regex(v8.line, /^mutant 8: killed by test\/fake\.test\.ts › checked \(reached less in a warm worker, fresh worker\)/);
});

test("stryker harness › a lazy worker imports a test file only when one of its tests is about to run", async (t) => {
  // Given a sandbox with two test files, the second leaving a marker when imported
  const sandbox = mkdtempSync(join(tmpdir(), "meshext-stryker-lazy-"));
  t.teardown(() => rmSync(sandbox, { recursive: true, force: true }));
  symlinkSync(SCRIPTS, join(sandbox, "scripts"), "dir");
  mkdirSync(join(sandbox, "lib"));
  mkdirSync(join(sandbox, "dist", "test"), { recursive: true });
  writeFileSync(join(sandbox, "lib", "fake.js"), FAKE_MODULE);
  writeFileSync(join(sandbox, "dist", "test", "fake.test.js"), FAKE_TESTS);
  const marker = join(sandbox, "second-imported");
  writeFileSync(join(sandbox, "dist", "test", "second.test.js"), `import test from "ava";\nimport { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "");\ntest("two", (t) => t.pass());\n`);
  // When a lazy worker started with import-time mutant 1 on runs the first file's "limit" test
  const worker = fork("scripts/stryker-worker.mjs", ["--lazy", "test/fake.test.ts", "test/second.test.ts"], {
    cwd: sandbox, execArgv: ["--import=./scripts/stryker-ava-loader.mjs"], env: { ...process.env, __STRYKER_ACTIVE_MUTANT__: "1" }, stdio: ["ignore", "ignore", "ignore", "ipc"],
  });
  t.teardown(() => worker.kill("SIGKILL"));
  const answers: Record<string, unknown>[] = [];
  const next = () => new Promise<Record<string, unknown>>((resolve) => worker.once("message", resolve));
  t.deepEqual(await next(), { ready: 0 }, "ready before importing anything");
  worker.send({ id: 1, mutant: "1", tests: ["test/fake.test.ts › limit"], hitLimit: 10_000, timeoutsMs: [5000] });
  answers.push(await next());
  // Then the test failed (LIMIT was made with the mutant on) and the second file was not imported
  t.like(answers[0], { id: 1, killed: true, ran: 1, failed: { test: "test/fake.test.ts › limit" } });
  t.false(existsSync(marker));
  // and a test of the second file imports it when it runs; an id no file registers is an error
  worker.send({ id: 2, mutant: "1", tests: ["test/second.test.ts › two"], hitLimit: 10_000, timeoutsMs: [5000] });
  t.like(await next(), { id: 2, killed: false, ran: 1 });
  t.true(existsSync(marker));
  worker.send({ id: 3, mutant: "1", tests: ["test/second.test.ts › three"], hitLimit: 10_000, timeoutsMs: [5000] });
  t.like(await next(), { id: 3, error: "unknown test ids: test/second.test.ts › three" });
});

test("stryker summary › the line under the table sums the rows: mutants, killed, equivalent, the score of what is scored, seconds", async (t) => {
  // given two rows as the table writes them
  const { totalLine } = (await import(pathToFileURL(join(SCRIPTS, "stryker-total.mjs")).href)) as { totalLine: (rows: string[]) => string };
  const rows = ["| admin | 175 | 171 | 1 | 0 | 3 | 99.4 % | 117 | full at 04222fc |", "| drain | 804 | 748 | 51 | 0 | 5 | 93.6 % | 489 | full at c0f729a |"];
  // when summed; then the score is the killed of all non-equivalent mutants, and the seconds are added
  t.is(totalLine(rows), "All 2 areas: 979 mutants, 919 killed, 8 equivalent, 94.6 %; 606 s (10.1 min) summed over the rows.");
});
