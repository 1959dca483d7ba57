// `npm start` builds only what it runs and only what is stale (scripts/build-if-stale.mjs): in a copy of the tree,
// the first run generates the protocol code and compiles the product (not the tests or the bench), a second run on
// the unchanged tree does nothing and says so within a second or two, and an edited source is reported stale.
import test from "ava";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = process.cwd();
const SCRIPT = join(ROOT, "scripts", "build-if-stale.mjs");

test("build-if-stale › builds the product once, then an unchanged tree is up to date in well under 10 s, and an edit is seen", (t) => {
  t.timeout(240_000);
  // Given a copy of the sources (no dist/) sharing this checkout's node_modules
  const tree = mkdtempSync(join(tmpdir(), "meshext-start-"));
  t.teardown(() => rmSync(tree, { recursive: true, force: true }));
  for (const p of ["extproc", "scripts", "wasm", "asconfig.json", "envoy", "tsconfig.json", "tsconfig.extproc.json", "package.json", "package-lock.json"]) cpSync(join(ROOT, p), join(tree, p), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(tree, "node_modules"));
  const build = (...args: string[]) => {
    const startedAt = Date.now();
    const r = spawnSync(process.execPath, [SCRIPT, "--root", tree, ...args], { encoding: "utf8" });
    return { status: r.status, said: r.stderr, ms: Date.now() - startedAt };
  };

  // When it runs on the fresh tree; then it says what it builds, and builds the product only
  const first = build();
  t.is(first.status, 0, first.said);
  t.regex(first.said, /build: protocol code \(extproc\/gen\/\) \(not built by this script yet\): buf generate/);
  t.regex(first.said, /build: product TypeScript \(dist\/extproc\/\) .*: tsc -p tsconfig\.extproc\.json/);
  t.regex(first.said, /build: drain filter \(build\/meshext_drain\.wasm\) .*: asc/, "meshext up runs Envoy with the drain filter");
  t.true(existsSync(join(tree, "build/meshext_drain.wasm")));
  t.true(existsSync(join(tree, "dist/extproc/cli.js")));
  t.false(existsSync(join(tree, "dist/test")), "the tests are not compiled for npm start");
  t.false(existsSync(join(tree, "dist/bench")), "neither is the bench");
  const builtAt = statSync(join(tree, "dist/extproc/cli.js")).mtimeMs;

  // When it runs again on the unchanged tree; then every step is up to date, nothing is rewritten, quickly
  const again = build();
  t.is(again.status, 0, again.said);
  t.is(again.said, "build: protocol code (extproc/gen/) up to date\nbuild: product TypeScript (dist/extproc/) up to date\nbuild: drain filter (build/meshext_drain.wasm) up to date\n");
  t.true(again.ms < 5000, `${again.ms} ms`);
  t.is(statSync(join(tree, "dist/extproc/cli.js")).mtimeMs, builtAt);

  // When a source file is edited; then --check names it as the reason and exits 1 (without building)
  const edited = join(tree, "extproc/log.ts");
  const later = Date.now() / 1000 + 5;
  utimesSync(edited, later, later);
  const stale = build("--check");
  t.is(stale.status, 1);
  t.regex(stale.said, /build: product TypeScript \(dist\/extproc\/\) stale \(changed: extproc\/log\.ts\)/);
  t.regex(stale.said, /protocol code \(extproc\/gen\/\) up to date/);
  t.is(readFileSync(join(ROOT, "package.json"), "utf8").includes('"start": "node scripts/build-if-stale.mjs && '), true, "npm start runs it");
});
