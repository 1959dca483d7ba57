// `npm run mutation`: applies each listed mutation (scripts/mutations.mjs) to a scratch copy of the
// compiled project, runs the test files of its group, and reports which mutations no test caught.
// Usage: node scripts/mutation.mjs [--only TEXT] [--out FILE]
//   --only A,B   run only mutations whose name contains A or B (then MUTATION.md is not rewritten unless --out)
//   --out FILE   where to record the result (default MUTATION.md for a full run)
// Needs a built dist/ (npm run mutation builds it first). Not part of CI.
//
// StrykerJS gives the independent score (npm run mutation:stryker, scripts/mutation-stryker.mjs); this list stays
// for the wasm filter and the cases Stryker's mutators cannot express. Why a list at all: there is no maintained
// ava runner for Stryker, so
// Stryker would use its command runner, which runs the whole command for every mutant without knowing
// which tests cover it; over this core it generates hundreds of mutants, each costing an ava start plus
// every test file. Named mutations, each with the test files of its area, keep a run near ten minutes on
// two shared cores, read as a list of bugs the suite must catch, and report a mutation whose code moved on
// as "not applied" instead of silently mutating something else.
import { spawn, execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { MUTATIONS, TEST_GROUPS } from "./mutations.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const argValue = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
const only = argValue("--only");
const outFile = argValue("--out") ?? (only ? undefined : "MUTATION.md");

/** A regex for `find` where every run of whitespace matches any run of whitespace. */
function findPattern(find) {
  const parts = find.trim().split(/\s+/).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(parts.join("\\s+"), "g");
}

/** Copies what the tests read (dist, test sources and data, envoy samples, package.json) into a temp dir. */
function makeScratch() {
  if (!existsSync(join(ROOT, "dist/extproc"))) throw new Error("dist/ is missing: run `npm run build:ts` (npm run mutation does)");
  const dir = mkdtempSync(join(tmpdir(), "meshext-mutation-"));
  for (const sub of ["dist", "test", "envoy"]) cpSync(join(ROOT, sub), join(dir, sub), { recursive: true });
  cpSync(join(ROOT, "package.json"), join(dir, "package.json"));
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  if (existsSync(join(ROOT, "build"))) symlinkSync(join(ROOT, "build"), join(dir, "build"), "dir");
  return dir;
}

/** Runs ava on `files` in `cwd`; resolves with pass/fail, the first failing test line and seconds taken. */
function runAva(cwd, files, timeoutMs) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(cwd, "node_modules/ava/entrypoints/cli.mjs"), "--fail-fast", ...files], {
      cwd,
      detached: true, // own process group, so a timeout can end ava and its workers together
      env: { ...process.env, CI: "1", FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (out += c));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      const seconds = (Date.now() - started) / 1000;
      const failLine = /✘ (?:\[fail\]: )?(.*)/.exec(out)?.[1]?.trim();
      const firstFailure = timedOut ? `timed out after ${Math.round(timeoutMs / 1000)} s` : (failLine ?? out.trim().split("\n").slice(-3).join(" ").slice(0, 200));
      resolve({ passed: code === 0 && !timedOut, firstFailure, seconds, out });
    });
  });
}

function gitDescribe() {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: ROOT, encoding: "utf8" }).trim() !== "";
    return dirty ? `${sha} (working tree with uncommitted changes)` : sha;
  } catch {
    return "unknown (not a git checkout)";
  }
}

async function main() {
  const wanted = only?.split(",").filter(Boolean);
  const selected = MUTATIONS.filter((mu) => !wanted || wanted.some((w) => mu.name.includes(w)));
  if (selected.length === 0) throw new Error(`no mutation name contains ${JSON.stringify(only)}`);
  const startedAt = new Date();
  const scratch = makeScratch();
  const cleanup = () => rmSync(scratch, { recursive: true, force: true });
  process.once("SIGINT", () => {
    cleanup();
    process.exit(130);
  });
  try {
    // Baseline: every group used must pass unmutated, else a "killed" would mean nothing. A few tests
    // are timing-sensitive on a loaded machine, so a group gets three tries before the run gives up.
    const baseline = {};
    for (const group of [...new Set(selected.map((mu) => mu.group))]) {
      let r;
      for (let attempt = 1; attempt <= 3; attempt++) {
        r = await runAva(scratch, TEST_GROUPS[group], 300_000);
        if (r.passed) break;
        console.log(`baseline ${group}: attempt ${attempt} failed (${r.firstFailure})`);
      }
      if (!r.passed) throw new Error(`baseline: the ${group} tests fail without any mutation:\n${r.out.slice(-3000)}`);
      baseline[group] = r.seconds;
      console.log(`baseline ${group}: ${TEST_GROUPS[group].length} files pass in ${r.seconds.toFixed(1)} s`);
    }
    const results = [];
    for (const mu of selected) {
      const distFile = join(scratch, "dist", mu.file.replace(/\.ts$/, ".js"));
      const original = existsSync(distFile) ? readFileSync(distFile, "utf8") : undefined;
      const found = original === undefined ? 0 : (original.match(findPattern(mu.find)) ?? []).length;
      if (found !== 1) {
        const why = original === undefined ? `${mu.file} not found` : found === 0 ? "target text not found" : `target text found ${found} times`;
        results.push({ ...mu, status: "not applied", detail: why, seconds: 0 });
        console.log(`not applied  ${mu.name}: ${why}`);
        continue;
      }
      const mutated = original.replace(findPattern(mu.find), () => mu.replace);
      writeFileSync(distFile, mutated);
      try {
        try {
          execFileSync(process.execPath, ["--check", distFile], { stdio: "pipe" });
        } catch (err) {
          results.push({ ...mu, status: "not applied", detail: `mutant does not parse: ${String(err.stderr).split("\n").find((l) => /Error/.test(l)) ?? ""}`, seconds: 0 });
          console.log(`not applied  ${mu.name}: mutant does not parse`);
          continue;
        }
        const timeoutMs = Math.max(60_000, baseline[mu.group] * 4000);
        const r = await runAva(scratch, TEST_GROUPS[mu.group], timeoutMs);
        const status = r.passed ? "SURVIVED" : "killed";
        results.push({ ...mu, status, detail: r.passed ? "every test passed" : r.firstFailure, seconds: r.seconds });
        console.log(`${status.padEnd(12)} ${mu.name} (${r.seconds.toFixed(1)} s)${r.passed ? "" : ` by ${r.firstFailure}`}`);
      } finally {
        writeFileSync(distFile, original);
      }
    }
    report(results, startedAt);
  } finally {
    cleanup();
  }
}

function report(results, startedAt) {
  const applied = results.filter((r) => r.status !== "not applied");
  const killed = applied.filter((r) => r.status === "killed");
  const survivors = applied.filter((r) => r.status === "SURVIVED");
  const notApplied = results.filter((r) => r.status === "not applied");
  const score = applied.length ? (100 * killed.length) / applied.length : 0;
  const wallS = Math.round((Date.now() - startedAt.getTime()) / 1000);
  const summary = `score ${score.toFixed(1)} %: ${killed.length} of ${applied.length} applied mutations killed, ${survivors.length} survived; ${notApplied.length} not applied`;
  console.log(`\n${summary} (${wallS} s)`);
  for (const s of survivors) console.log(`  survivor: ${s.name} (${s.file})`);
  for (const n of notApplied) console.log(`  not applied: ${n.name} (${n.file}): ${n.detail}`);
  if (!outFile) return;
  const cell = (s) => String(s).replace(/\|/g, "\\|").replace(/\n/g, " ");
  const lines = [
    "# Mutation run",
    "",
    "Latest result of `npm run mutation` (written by that run; scripts/mutation.mjs applies the mutations listed in scripts/mutations.mjs one at a time to a scratch copy of the compiled project and runs the test files of each mutation's group).",
    "",
    `- commit ${gitDescribe()}, Node ${process.version}, started ${startedAt.toISOString()}, took ${wallS} s`,
    `- **${summary}**`,
    "",
    "## Survivors",
    "",
    ...(survivors.length ? survivors.map((s) => `- ${s.name} (${s.file}): \`${cell(s.find)}\` → \`${cell(s.replace)}\``) : ["None."]),
    "",
    "## Not applied (target text missing or found more than once, or the mutant does not parse: update scripts/mutations.mjs)",
    "",
    ...(notApplied.length ? notApplied.map((n) => `- ${n.name} (${n.file}): ${n.detail}`) : ["None."]),
    "",
    "## Every mutation",
    "",
    "| mutation | file | tests | result | first failing test | s |",
    "| --- | --- | --- | --- | --- | --- |",
    ...results.map((r) => `| ${cell(r.name)} | ${r.file} | ${r.group} | ${r.status} | ${cell(r.detail)} | ${r.seconds.toFixed(1)} |`),
    "",
  ];
  // The StrykerJS table (npm run mutation:stryker) lives in the same file between its markers: keep it.
  const previous = existsSync(resolve(ROOT, outFile)) ? readFileSync(resolve(ROOT, outFile), "utf8") : "";
  const [begin, end] = ["<!-- stryker:begin -->", "<!-- stryker:end -->"];
  if (previous.includes(begin) && previous.includes(end)) lines.push(previous.slice(previous.indexOf(begin), previous.indexOf(end) + end.length), "");
  writeFileSync(resolve(ROOT, outFile), lines.join("\n"));
  console.log(`recorded in ${outFile}`);
}

main().catch((err) => {
  console.error(`mutation: ${err.message}`);
  process.exitCode = 1;
});
