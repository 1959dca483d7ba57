// `npm run mutation:stryker`: an independent mutation score from StrykerJS, area by area (scripts/stryker-areas.mjs).
// Stryker's command runner: the area's sources are instrumented once with mutation switching, the sandbox is
// built once (tsc) and a coverage pass records which tests reach which mutant (scripts/stryker-build.mjs); then per
// mutant (__STRYKER_ACTIVE_MUTANT__ set) scripts/stryker-ask.sh (or, until it is up, scripts/stryker-dispatch.mjs) asks the harness's daemon, whose workers keep
// the area's test files imported and run only the tests that reach the mutant, switching it on at run time
// (scripts/stryker-daemon.mjs, scripts/stryker-worker.mjs).
// Usage: node scripts/mutation-stryker.mjs [--area A[,B]] [--files F[,G]] [--since COMMIT] [--concurrency N]
//   --area A,B      only these areas (default: all)
//   --files F,G     only these source files (or globs) of the areas: for working through one file's survivors;
//                   prints the counts and survivors but leaves the area's row in MUTATION.md as it was
//   --since COMMIT  incremental: only source files changed since COMMIT (committed or not); an area whose
//                   test files changed runs whole; areas with no change keep their previous row
//   --concurrency N parallel mutants, one harness worker each (default 2: the two cores CI has)
//   --verify-every N  every Nth mutant (by id) also runs under AVA; the verdicts that differ are listed
//                   (mutation-reports/stryker/<area>/verify.jsonl): the harness checked against the real runner
// Reports: mutation-reports/stryker/<area>/index.html and mutation.json (git-ignored). The summary table goes
// into MUTATION.md between the stryker markers; mutants listed in scripts/stryker-equivalents.json (each with a
// one-line reason) count as equivalent: out of the score's denominator, shown in their own column. A survivor no
// test reached in the coverage pass counts as "no coverage" (mutation-reports/stryker/<area>/coverage-map.json).
import { spawnSync, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { mutateFor, STRYKER_AREAS } from "./stryker-areas.mjs";
import { reclassifyUncovered } from "./stryker-coverage.mjs";
import { totalLine } from "./stryker-total.mjs";
import { isEquivalent } from "./stryker-equivalent-match.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const REPORTS = join(ROOT, "mutation-reports", "stryker");
const EQUIVALENTS = join(ROOT, "scripts", "stryker-equivalents.json");
const SUMMARY_FILE = join(ROOT, "MUTATION.md");
export const BEGIN = "<!-- stryker:begin -->";
export const END = "<!-- stryker:end -->";
export const NOTES = "<!-- stryker:notes (kept when the table is rewritten) -->";

const args = process.argv.slice(2);
const argValue = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
const areaNames = argValue("--area")?.split(",") ?? Object.keys(STRYKER_AREAS);
const since = argValue("--since");
const onlyFiles = argValue("--files")?.split(",");
const concurrency = Number(argValue("--concurrency") ?? 2);
const verifyEvery = Number(argValue("--verify-every") ?? 0);
for (const a of areaNames) {
  if (!STRYKER_AREAS[a]) {
    console.error(`mutation:stryker: unknown area ${JSON.stringify(a)} (known: ${Object.keys(STRYKER_AREAS).join(", ")})`);
    process.exit(2);
  }
}
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error("mutation:stryker: --concurrency must be a whole number >= 1");
  process.exit(2);
}

/** Files changed since `commit`, committed or in the work tree. */
function changedSince(commit) {
  const out = execFileSync("git", ["diff", "--name-only", commit, "--"], { cwd: ROOT, encoding: "utf8" });
  return out.split("\n").filter(Boolean);
}

const coverageMapFile = (name) => join(REPORTS, name, "coverage-map.json");

function strykerConfig(name, area, mutate) {
  return {
    $schema: "./node_modules/@stryker-mutator/core/schema/stryker-schema.json",
    testRunner: "command",
    // Per mutant: only the tests the coverage pass saw reach it, in the harness (none: exits 0 at once).
    commandRunner: { command: `bash scripts/stryker-ask.sh ${name}` },
    // Built once in the sandbox: the instrumented sources compile to dist/ like the real build, then the coverage pass.
    buildCommand: `node scripts/stryker-build.mjs ${ROOT} ${name} ${coverageMapFile(name)} ${concurrency}`,
    mutate,
    disableTypeChecks: "extproc/**/*.ts",
    coverageAnalysis: "off",
    concurrency,
    timeoutMS: 60_000,
    // The wasm build stays out of the sandbox, but the drain contract both sides share is read by the tests.
    ignorePatterns: ["/node_modules", "/dist", "/.meshext", "/mutation-reports", "/.stryker-tmp", "/wasm/*", "!/wasm/contract.json"],
    tempDirName: ".stryker-tmp",
    symlinkNodeModules: false,
    cleanTempDir: true,
    reporters: ["html", "json", "clear-text", "progress-append-only"],
    htmlReporter: { fileName: relative(ROOT, join(REPORTS, name, "index.html")) },
    jsonReporter: { fileName: relative(ROOT, join(REPORTS, name, "mutation.json")) },
    clearTextReporter: { allowColor: false, logTests: false },
  };
}

/** Equivalent mutants by key (file, line, column, mutator, replacement). */
function loadEquivalents() {
  const list = JSON.parse(readFileSync(EQUIVALENTS, "utf8"));
  const bad = list.filter((e) => !e.file || !e.line || !e.mutator || typeof e.reason !== "string" || e.reason.trim() === "");
  if (bad.length > 0) throw new Error(`${relative(ROOT, EQUIVALENTS)}: every entry needs file, line, mutator and a reason: ${JSON.stringify(bad[0])}`);
  return list;
}

const equivalentKey = (file, line, column, mutator, replacement) => `${file}:${line}:${column ?? "*"}:${mutator}:${replacement ?? "*"}`;

/** Counts from one area's mutation.json (mutation-testing-report-schema). */
export function summarise(report, equivalents) {
  const c = { mutants: 0, killed: 0, timeout: 0, survived: 0, noCoverage: 0, equivalent: 0, errors: 0, survivors: [] };
  for (const [file, { mutants, source }] of Object.entries(report.files)) {
    const lines = typeof source === "string" ? source.split("\n") : undefined;
    for (const m of mutants) {
      if (m.status === "Ignored" || m.status === "CompileError" || m.status === "RuntimeError") {
        c.errors++;
        continue;
      }
      c.mutants++;
      if (m.status === "Killed") c.killed++;
      else if (m.status === "Timeout") c.timeout++;
      else if (isEquivalent(equivalents, file, m, lines)) c.equivalent++;
      else {
        if (m.status === "NoCoverage") c.noCoverage++;
        else c.survived++;
        c.survivors.push(`${equivalentKey(file, m.location.start.line, m.location.start.column, m.mutatorName, m.replacement)} ${m.status}`);
      }
    }
  }
  const scored = c.mutants - c.equivalent;
  c.score = scored === 0 ? 100 : (100 * (c.killed + c.timeout)) / scored;
  return c;
}

function row(name, c, seconds, note) {
  return `| ${name} | ${c.mutants} | ${c.killed + c.timeout} | ${c.survived} | ${c.noCoverage} | ${c.equivalent} | ${c.score.toFixed(1)} % | ${seconds} | ${note} |`;
}

/** Previous rows of the Stryker table in MUTATION.md, by area. */
function previousRows(text) {
  const block = text.includes(BEGIN) ? text.slice(text.indexOf(BEGIN), text.indexOf(END)) : "";
  const rows = new Map();
  for (const line of block.split("\n")) {
    const m = /^\| ([a-z-]+) \| \d/.exec(line);
    if (m) rows.set(m[1], line);
  }
  return rows;
}

/** The hand-written notes under the table (between NOTES and END), kept as they are when the table is rewritten. */
function previousNotes(text) {
  if (!text.includes(NOTES) || !text.includes(END)) return "";
  return text.slice(text.indexOf(NOTES) + NOTES.length, text.indexOf(END)).trim();
}

function writeSummary(results) {
  const text = existsSync(SUMMARY_FILE) ? readFileSync(SUMMARY_FILE, "utf8") : "# Mutation run\n";
  const rows = previousRows(text);
  for (const r of results) rows.set(r.name, r.row);
  const ordered = Object.keys(STRYKER_AREAS).filter((a) => rows.has(a)).map((a) => rows.get(a));
  const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  const block = [
    BEGIN,
    "## StrykerJS (independent mutants)",
    "",
    "Written by `npm run mutation:stryker [-- --area A] [-- --since COMMIT]` (scripts/mutation-stryker.mjs): Stryker's own",
    "mutators over each area's sources, its command runner asking, per mutant, an in-process harness that keeps the",
    "area's test files (scripts/stryker-areas.mjs) imported in a few worker processes and switches the mutant on at run",
    "time (scripts/stryker-daemon.mjs, stryker-worker.mjs; `ava` answered by stryker-ava-shim.mjs). Per-test coverage: after",
    "the sandbox build, each test runs once unmutated and the mutants it reaches are recorded (scripts/stryker-build.mjs);",
    "each mutant then runs only the tests that reach it, fastest first, until one fails. A mutant reached while the files",
    "were imported runs in a fresh worker started with it on; a kill is believed only when the killing test passes again",
    "with no mutant in the same worker (otherwise a fresh worker runs the mutant again). A mutant no test reaches counts as",
    "\"no coverage\" (not killed, in the score's denominator). Killed includes timeouts; equivalent mutants are listed with",
    "a reason in scripts/stryker-equivalents.json and left out of the score; each entry keeps its line's text, so it follows",
    "its line when code above it moves (`npm run mutation:tidy-equivalents` after a run writes the texts and lists stale entries).",
    `Rows are updated per area (each row's run column names the commit it measured); last written with HEAD at ${commit}, Node ${process.version}, ${new Date().toISOString()}.`,
    "",
    "| area | mutants | killed | survived | no coverage | equivalent | score | s | run |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...ordered,
    "",
    totalLine(ordered),
    "",
    NOTES,
    previousNotes(text),
    END,
  ].join("\n");
  const next = text.includes(BEGIN) ? text.slice(0, text.indexOf(BEGIN)) + block + text.slice(text.indexOf(END) + END.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(SUMMARY_FILE, next);
}

const equivalents = loadEquivalents();
const changed = since ? changedSince(since) : undefined;
const results = [];
for (const name of areaNames) {
  const area = STRYKER_AREAS[name];
  const mutate = mutateFor(area, changed, onlyFiles);
  if (!mutate) {
    console.log(`mutation:stryker: ${name}: ${onlyFiles ? `none of ${onlyFiles.join(", ")} is in the area` : ""}${onlyFiles && since ? " or " : ""}${since ? `nothing changed since ${since}` : ""}, skipped`);
    continue;
  }
  mkdirSync(join(REPORTS, name), { recursive: true });
  const configFile = join(REPORTS, name, "stryker.config.json");
  writeFileSync(configFile, JSON.stringify(strykerConfig(name, area, mutate), null, 2));
  console.log(`mutation:stryker: ${name}: ${mutate.join(" ")} with ${area.tests.length} test files`);
  rmSync(coverageMapFile(name), { force: true }); // written afresh by this run's build step
  const verifyLog = join(REPORTS, name, "verify.jsonl");
  rmSync(verifyLog, { force: true });
  const started = Date.now();
  const measured = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  // MUTATION.md is this script's own output (an earlier area's row): a change there is no change to what is measured.
  const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)MUTATION.md"], { cwd: ROOT, encoding: "utf8" }).trim() !== "";
  const env = { ...process.env, ...(verifyEvery > 0 ? { STRYKER_VERIFY_EVERY: String(verifyEvery), STRYKER_VERIFY_LOG: verifyLog } : {}) };
  const run = spawnSync(process.execPath, [join(ROOT, "node_modules/@stryker-mutator/core/bin/stryker.js"), "run", configFile], { cwd: ROOT, stdio: "inherit", env });
  const seconds = Math.round((Date.now() - started) / 1000);
  const reportFile = join(REPORTS, name, "mutation.json");
  if (run.status !== 0 || !existsSync(reportFile)) {
    console.error(`mutation:stryker: ${name}: stryker exited ${run.status}; see .stryker-tmp and stryker.log`);
    process.exitCode = 1;
    continue;
  }
  const { map, files } = JSON.parse(readFileSync(coverageMapFile(name), "utf8"));
  const c = summarise(reclassifyUncovered(JSON.parse(readFileSync(reportFile, "utf8")), map, files), equivalents);
  // The tree the sandbox was copied from: commits made while the run goes on are not in it.
  const scope = [since ? `since ${since}` : "", onlyFiles ? `files ${mutate.join(" ")}` : ""].filter(Boolean).join(", ") || "full";
  const note = `${scope} at ${measured}${dirty ? " with uncommitted changes" : ""}`;
  if (!onlyFiles) results.push({ name, row: row(name, c, seconds, note) });
  console.log(`mutation:stryker: ${name}: ${c.killed + c.timeout} of ${c.mutants - c.equivalent} killed (${c.score.toFixed(1)} %), ${c.equivalent} equivalent, ${seconds} s`);
  for (const s of c.survivors) console.log(`  survivor ${s}`);
  if (existsSync(verifyLog)) {
    const checks = readFileSync(verifyLog, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const differ = checks.filter((v) => v.harness !== v.ava);
    console.log(`mutation:stryker: ${name}: harness vs AVA on ${checks.length} mutants: ${differ.length} differ`);
    for (const v of differ) console.log(`  differs: mutant ${v.mutant}: harness ${v.harness ? "killed" : "survived"} (${v.how}${v.test ? `, ${v.test}` : ""}), AVA ${v.ava ? "killed" : "survived"}`);
  }
}
if (results.length > 0) writeSummary(results);
