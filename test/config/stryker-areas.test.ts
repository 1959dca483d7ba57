// stryker areas › which of an area's source files a mutation:stryker run mutates: all of them, those changed since a
// commit (all again when one of its test files changed), and those named by --files, within the area only.
import test from "ava";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

type Area = { mutate: string[]; tests: string[] };
const { globMatches, mutateFor, STRYKER_AREAS } = (await import(pathToFileURL(join(process.cwd(), "scripts", "stryker-areas.mjs")).href)) as {
  globMatches(file: string, glob: string): boolean;
  mutateFor(area: Area, changed?: string[], only?: string[]): string[] | undefined;
  STRYKER_AREAS: Record<string, Area>;
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
