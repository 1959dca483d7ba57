// stryker areas › which of an area's source files a mutation:stryker run mutates: all of them, those changed since a
// commit (all again when one of its test files changed), and those named by --files, within the area only; which mutants the equivalents list names.
import test from "ava";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

type Area = { mutate: string[]; tests: string[] };
const { globMatches, mutateFor, STRYKER_AREAS } = (await import(pathToFileURL(join(process.cwd(), "scripts", "stryker-areas.mjs")).href)) as {
  globMatches(file: string, glob: string): boolean;
  mutateFor(area: Area, changed?: string[], only?: string[]): string[] | undefined;
  STRYKER_AREAS: Record<string, Area>;
};
const { isEquivalent } = (await import(pathToFileURL(join(process.cwd(), "scripts", "stryker-equivalent-match.mjs")).href)) as {
  isEquivalent(list: object[], file: string, mutant: { mutatorName: string; replacement?: string; location: { start: { line: number; column: number }; end: { line: number; column: number } } }, sourceLines?: string[]): boolean;
};
const area: Area = { mutate: ["extproc/control-plane/**/*.ts"], tests: ["test/control-plane/api.test.ts"] };

test("stryker areas › given the area globs, when matched, then ** spans folders and * stays inside one name", (t) => {
  t.true(globMatches("extproc/control-plane/paging.ts", "extproc/control-plane/**/*.ts"));
  t.true(globMatches("extproc/control-plane/deep/x.ts", "extproc/control-plane/**/*.ts"));
  t.true(globMatches("extproc/transport/grpc-wire.ts", "extproc/transport/grpc-*.ts"));
  t.false(globMatches("extproc/transport/processor.ts", "extproc/transport/grpc-*.ts"));
  t.false(globMatches("extproc/control-planeX/paging.ts", "extproc/control-plane/**/*.ts"));
});

test("stryker areas › given no change list and no --files, when planned, then the whole area is mutated", (t) => {
  t.deepEqual(mutateFor(area), area.mutate);
});

test("stryker areas › given --files, when planned, then only the named files of the area, and nothing when none is in it", (t) => {
  t.deepEqual(mutateFor(area, undefined, ["extproc/control-plane/paging.ts", "extproc/policy/x.ts"]), ["extproc/control-plane/paging.ts"]);
  t.is(mutateFor(area, undefined, ["extproc/policy/x.ts"]), undefined);
});

test("stryker areas › given changes since a commit, when planned, then the changed files of the area, narrowed by --files; a changed test file brings the whole area", (t) => {
  const changed = ["extproc/control-plane/paging.ts", "extproc/control-plane/store.ts", "README.md"];
  t.deepEqual(mutateFor(area, changed), ["extproc/control-plane/paging.ts", "extproc/control-plane/store.ts"]);
  t.deepEqual(mutateFor(area, changed, ["extproc/control-plane/store.ts"]), ["extproc/control-plane/store.ts"]);
  t.is(mutateFor(area, ["README.md"]), undefined);
  t.deepEqual(mutateFor(area, ["test/control-plane/api.test.ts"]), area.mutate);
  t.deepEqual(mutateFor(area, ["test/control-plane/api.test.ts"], ["extproc/control-plane/paging.ts"]), ["extproc/control-plane/paging.ts"]);
});

test("stryker areas › given the shipped areas, then every test file is listed once", (t) => {
  for (const [name, a] of Object.entries(STRYKER_AREAS)) t.deepEqual(a.tests.filter((f, i) => a.tests.indexOf(f) !== i), [], name);
});

test("stryker equivalents › given two mutants of one mutator at one place, when an entry gives the end column, then only the one ending there is equivalent", (t) => {
  // given `a !== x || b !== x` at 49:7: the whole condition → false ends at 55, its first operand → false ends at 29
  const at = (endColumn: number) => ({ mutatorName: "ConditionalExpression", replacement: "false", location: { start: { line: 49, column: 7 }, end: { line: 49, column: endColumn } } });
  const entry = { file: "p.ts", line: 49, column: 7, mutator: "ConditionalExpression", replacement: "false", reason: "r" };
  // when the entry names no end column, then both match; when it names 29, then only the operand's
  t.true(isEquivalent([entry], "p.ts", at(55)) && isEquivalent([entry], "p.ts", at(29)));
  t.false(isEquivalent([{ ...entry, endColumn: 29 }], "p.ts", at(55)));
  t.true(isEquivalent([{ ...entry, endColumn: 29 }], "p.ts", at(29)));
  // and another file, line, mutator or replacement never matches
  t.false(isEquivalent([entry], "q.ts", at(29)));
  t.false(isEquivalent([{ ...entry, line: 50 }], "p.ts", at(29)));
  t.false(isEquivalent([{ ...entry, mutator: "LogicalOperator" }], "p.ts", at(29)));
  t.false(isEquivalent([{ ...entry, replacement: "true" }], "p.ts", at(29)));
});

test("stryker equivalents › given an entry with its line's text, when code above it moves, then it still matches its line, and only a line with that text", (t) => {
  // given an entry written when `if (x) return 0;` was line 3
  const entry = { file: "p.ts", line: 3, column: 6, mutator: "ConditionalExpression", replacement: "false", source: "if (x) return 0;", reason: "r" };
  const at = (line: number) => ({ mutatorName: "ConditionalExpression", replacement: "false", location: { start: { line, column: 6 }, end: { line, column: 7 } } });
  // when two lines were added above it, then the mutant now at line 5 matches, and the line now at 3 does not
  const moved = ["// a", "// b", "let x = 1;", "// c", "  if (x) return 0;"];
  t.true(isEquivalent([entry], "p.ts", at(5), moved));
  t.false(isEquivalent([entry], "p.ts", at(3), moved));
  // and when the text stands on two lines, then only the entry's own line matches (which of them was meant is not known)
  const twice = ["if (x) return 0;", "// b", "if (x) return 0;"];
  t.true(isEquivalent([entry], "p.ts", at(3), twice));
  t.false(isEquivalent([entry], "p.ts", at(1), twice));
  // and without the file's lines, the line number alone decides
  t.true(isEquivalent([entry], "p.ts", at(3)));
  t.false(isEquivalent([entry], "p.ts", at(5)));
});
