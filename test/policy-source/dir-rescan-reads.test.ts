// dir source › a rescan reads only the files whose inode, size or times changed, and parses only the documents
// of a changed file whose text changed (meshext_policy_dir_files_read_total, meshext_policy_dir_documents_parsed_total).
import test from "ava";
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { stringify } from "yaml";
import { DirPolicySource } from "../../extproc/policy-source/dir-source.js";

const FILES = 20;
const DOCS_PER_FILE = 50;

function fileText(f: number, edited?: number): string {
  const docs = [];
  for (let d = 0; d < DOCS_PER_FILE; d++) {
    const action = d === edited ? "Deny" : "Allow";
    docs.push(stringify({ type: "MeshTrafficPermission", name: `mtp-${f}-${d}`, mesh: "default", spec: { targetRef: { kind: "MeshService", name: `svc-${f}-${d}` }, from: [{ targetRef: { kind: "Mesh" }, default: { action } }] } }));
  }
  return docs.join("---\n");
}

async function counter(registry: Registry, name: string): Promise<number> {
  return (await registry.getSingleMetric(name)!.get()).values[0]?.value ?? 0;
}

function setup() {
  const dir = mkdtempSync(join(tmpdir(), "meshext-rescan-"));
  const anHourAgo = new Date(Date.now() - 3_600_000);
  for (let f = 0; f < FILES; f++) {
    writeFileSync(join(dir, `f-${f}.yaml`), fileText(f));
    utimesSync(join(dir, `f-${f}.yaml`), anHourAgo, anHourAgo); // written long before the first read
  }
  const registry = new Registry();
  const applied: number[] = [];
  const source = new DirPolicySource({ dir, registry, rescanIntervalMs: 0, watchedRescanIntervalMs: 0, apply: (p) => void applied.push(p.length) });
  const reads = () => counter(registry, "meshext_policy_dir_files_read_total");
  const parsed = () => counter(registry, "meshext_policy_dir_documents_parsed_total");
  return { dir, source, applied, reads, parsed, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test("dir source › given 20 settled files, when one of them is edited and the directory rescanned, then one file is read and one document parsed", async (t) => {
  const s = setup();
  t.teardown(s.done);
  await s.source.scan();
  t.is(await s.reads(), FILES);
  t.is(await s.parsed(), FILES * DOCS_PER_FILE);
  await s.source.scan();
  t.is(await s.reads(), FILES, "an untouched directory is not read again");
  writeFileSync(join(s.dir, "f-7.yaml"), fileText(7, 3));
  const report = await s.source.scan();
  t.is(await s.reads(), FILES + 1, "only the edited file is read");
  t.is(await s.parsed(), FILES * DOCS_PER_FILE + 1, "only its edited document is parsed");
  t.true(report.applied);
  t.deepEqual(s.applied, [FILES * DOCS_PER_FILE, FILES * DOCS_PER_FILE]);
});

test("dir source › given settled files, when one is touched without a change, then it alone is read and nothing is parsed or applied", async (t) => {
  const s = setup();
  t.teardown(s.done);
  await s.source.scan();
  const now = new Date();
  utimesSync(join(s.dir, "f-2.yaml"), now, now);
  const report = await s.source.scan();
  t.is(await s.reads(), FILES + 1);
  t.is(await s.parsed(), FILES * DOCS_PER_FILE);
  t.false(report.applied);
});
