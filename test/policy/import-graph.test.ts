// architecture › scripts/import-graph.mjs: extproc/ has no import circle and no stage importing a later one,
// and the check fails when either is introduced.
import test from "ava";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const SCRIPT = join(ROOT, "scripts/import-graph.mjs");

function checkCopy(t: import("ava").ExecutionContext, edit: (dir: string) => void): { status: number | null; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), "import-graph-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(join(ROOT, "extproc"), join(dir, "extproc"), { recursive: true, filter: (src) => !src.includes("/extproc/gen") });
  edit(dir);
  const r = spawnSync(process.execPath, [SCRIPT, "--root", dir], { encoding: "utf8" });
  return { status: r.status, stderr: r.stderr };
}

test("architecture › given this repository, when its import graph is checked, then it has no circle and no upward import", (t) => {
  const out = execFileSync(process.execPath, [SCRIPT], { encoding: "utf8" });
  t.regex(out, /no circle, no upward import/);
});

test("architecture › given a plan importing a per-request file, when checked, then the upward import is named", (t) => {
  const r = checkCopy(t, (dir) => writeFileSync(join(dir, "extproc/policy/plans/bad.ts"), 'import type { EvalContext } from "../decide/outcomes.js";\nexport type X = EvalContext;\n'));
  t.is(r.status, 1);
  t.regex(r.stderr, /upward import: extproc\/policy\/plans\/bad\.ts \(stage plans\) imports extproc\/policy\/decide\/outcomes\.ts/);
});

test("architecture › given two files importing each other, when checked, then the circle is named", (t) => {
  const r = checkCopy(t, (dir) => {
    writeFileSync(join(dir, "extproc/policy/decide/a.ts"), 'import type { B } from "./b.js";\nexport type A = B | 1;\n');
    writeFileSync(join(dir, "extproc/policy/decide/b.ts"), 'import type { A } from "./a.js";\nexport type B = A | 2;\n');
  });
  t.is(r.status, 1);
  t.regex(r.stderr, /import circle between files: extproc\/policy\/decide\/a\.ts ↔ extproc\/policy\/decide\/b\.ts/);
});

test("architecture › given a control-plane part importing its router, when checked, then the circle is named", (t) => {
  const r = checkCopy(t, (dir) => writeFileSync(join(dir, "extproc/control-plane/part.ts"), 'import { route } from "./routes.js";\nexport const r = route;\n'));
  t.is(r.status, 0, "a part importing the router alone is no circle");
  const r2 = checkCopy(t, (dir) => {
    writeFileSync(join(dir, "extproc/control-plane/part.ts"), 'import { route } from "./routes.js";\nexport const r = route;\n');
    writeFileSync(join(dir, "extproc/control-plane/routes.ts"), 'import { r } from "./part.js";\nexport const route = () => r;\n');
  });
  t.is(r2.status, 1);
  t.regex(r2.stderr, /import circle between files: extproc\/control-plane\/part\.ts ↔ extproc\/control-plane\/routes\.ts/);
});

test("architecture › given a folder under policy/ that is no stage, when checked, then its files are named", (t) => {
  const r = checkCopy(t, (dir) => {
    cpSync(join(dir, "extproc/policy/decide/random.ts"), join(dir, "extproc/policy/misc.ts"));
  });
  t.is(r.status, 1);
  t.regex(r.stderr, /extproc\/policy\/misc\.ts: not in a policy stage folder/);
});
