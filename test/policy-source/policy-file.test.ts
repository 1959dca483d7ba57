// policy file › one file of a policy directory read whole or by documents: what is held, dropped, warned about and counted, when a read is settled, unchanged or failed.
import test from "ava";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { documentDigest, readPolicyFile, type FileJob, type FileOutcome, type FileState } from "../../extproc/policy-source/policy-file.js";
import type { Dataplane } from "../../extproc/policy/model/dataplane.js";

const dataplane: Dataplane = { mesh: "default", name: "dp", proxyType: "Sidecar", inbounds: [{ name: "8080", port: 8080, tags: { "kuma.io/service": "backend" } }] };
const pause = async () => {};
/** A MeshTrafficPermission on service `svc` using the deprecated `from` and MeshService kinds (so it has warnings). */
const deprecated = (name: string, svc: string) =>
  stringify({ type: "MeshTrafficPermission", name, mesh: "default", spec: { targetRef: { kind: "MeshService", name: svc }, from: [{ targetRef: { kind: "MeshService", name: "web" }, default: { action: "Allow" } }] } });
/** A MeshTrafficPermission with `rules` (no warnings): on the whole mesh, or on the dataplanes of `svc`. */
const current = (name: string, svc?: string, client = "web") =>
  stringify({ type: "MeshTrafficPermission", name, mesh: "default", spec: { targetRef: svc ? { kind: "Dataplane", labels: { "kuma.io/service": svc } } : { kind: "Mesh" }, rules: [{ default: { allow: [{ spiffeID: { type: "Exact", value: `spiffe://default/${client}` } }] } }] } });
const mesh = "type: Mesh\nname: default\n";
const invalid = "type: MeshTrafficPermission\nname: bad\nmesh: default\nspec: {}\n";

function fileWith(t: import("ava").ExecutionContext, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "policy-file-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "p.yaml");
  writeFileSync(file, text);
  return file;
}
function read(file: string, more: Partial<FileJob> = {}): Promise<FileOutcome> {
  return readPolicyFile({ file, stamp: "s1", mtimeMs: 0, dataplane, ...more }, pause);
}
function stateOf(t: import("ava").ExecutionContext, o: FileOutcome): FileState & { out: Extract<FileOutcome, { state: FileState }> } {
  if (!("state" in o)) throw new Error(`no state: ${JSON.stringify(o)}`);
  t.truthy(o.state);
  return Object.assign(o.state, { out: o });
}

for (const byDocuments of [false, true]) {
  const how = byDocuments ? "by documents" : "whole";
  test(`policy file › given policies with and without deprecated fields, some selecting the dataplane, when read ${how}, then only held ones are warned about, the others counted, and every document counted`, async (t) => {
    const file = fileWith(t, [deprecated("a", "backend"), current("n"), deprecated("x", "svc-x"), current("m", "svc-y"), deprecated("y", "svc-y"), mesh, invalid].join("---\n"));
    const s = stateOf(t, await read(file, { byDocuments }));
    t.deepEqual(s.held.map((p) => p.name), ["a", "n"]);
    t.is(s.dropped, "MeshTrafficPermission/default/x\nMeshTrafficPermission/default/m\nMeshTrafficPermission/default/y", "the dropped keys, one a line");
    t.is(s.droppedCount, 3);
    t.deepEqual(s.out.warned.map((w) => [w.kind, w.name, (w.warnings as Array<{ field: string }>).map((x) => x.field).sort()]), [
      ["MeshTrafficPermission", "a", ["spec.from", "spec.from[0].targetRef.kind", "spec.targetRef.kind"]],
    ]);
    t.is(s.out.warnedNotHeld, 2, "x and y: deprecated but not held");
    t.deepEqual(s.resources.map((r) => `${r.kind}/${r.name}`), ["Mesh/default"]);
    t.deepEqual(s.rejected.map((r) => [r.name, r.index]), [["bad", 6]]);
    t.is(s.out.parsedDocuments, 7, "five policies, a resource and a rejected document");
    t.is(s.documents === undefined, !byDocuments, "only a read by documents keeps its document index");
  });
}

test("policy file › given a plain YAML file, when read with the default options, then it is read by documents (its index kept)", async (t) => {
  const s = stateOf(t, await read(fileWith(t, current("n"))));
  t.truthy(s.documents);
});

test("policy file › given a file read before, when read again unchanged, then only the new stamp and settledness come back; when edited, a new state", async (t) => {
  const file = fileWith(t, [current("n"), deprecated("x", "svc-x")].join("---\n"));
  const first = stateOf(t, await read(file));
  const prev = { digest: first.digest, held: first.held, dropped: first.dropped, droppedCount: first.droppedCount, ...(first.droppedFilter ? { droppedFilter: first.droppedFilter } : {}), resources: first.resources, ...(first.documents ? { documents: first.documents } : {}), rejected: 0 };
  t.deepEqual(await read(file, { stamp: "s2", mtimeMs: Date.now() - 60_000, prev }), { unchanged: { stamp: "s2", settled: true } });
  // an in-place edit of the held policy: the dropped keys are the same, so the previous list and filter are kept
  writeFileSync(file, [current("n", undefined, "admin"), deprecated("x", "svc-x")].join("---\n"));
  const second = stateOf(t, await read(file, { stamp: "s3", prev }));
  t.not(second.digest, first.digest);
  t.is(second.stamp, "s3");
  t.deepEqual(second.held.map((p) => [p.name, JSON.stringify(p.spec).includes("spiffe://default/admin")]), [["n", true]]);
  t.is(second.dropped, first.dropped);
  t.is(second.droppedCount, 1);
  t.is(second.droppedFilter, first.droppedFilter, "the previous read's filter of dropped keys");
});

test("policy file › given a file's mtime, when read, then the read is settled only more than 2 s after that write", async (t) => {
  const file = fileWith(t, current("n"));
  const now = Date.now;
  const at = now.call(Date);
  Date.now = () => at;
  t.teardown(() => void (Date.now = now));
  const cases: Array<[string, number, boolean]> = [["just written", at, false], ["exactly 2 s ago", at - 2000, false], ["2.001 s ago", at - 2001, true], ["a minute ago", at - 60_000, true]];
  for (const [name, mtimeMs, settled] of cases) t.is(stateOf(t, await read(file, { mtimeMs })).settled, settled, name);
});

test("policy file › given a file that is gone, when read, then the outcome is the read's error", async (t) => {
  const out = await read(join(tmpdir(), "policy-file-no-such-dir", "p.yaml"));
  t.true("error" in out && /ENOENT/.test(out.error), JSON.stringify(out));
});

// Serial (serial tests run before the others): node:crypto is without `hash` while the module loads again.
test.serial("policy file › given a Node without crypto.hash (before 20.12), then a document's digest is still its SHA-1 in base64", async (t) => {
  const nodeCrypto = createRequire(import.meta.url)("node:crypto") as { hash?: unknown };
  const hash = nodeCrypto.hash;
  nodeCrypto.hash = undefined;
  syncBuiltinESMExports();
  let loaded: typeof import("../../extproc/policy-source/policy-file.js");
  try {
    loaded = (await import(`${new URL("../../extproc/policy-source/policy-file.js", import.meta.url).href}?without-crypto-hash`)) as typeof loaded;
  } finally {
    nodeCrypto.hash = hash;
    syncBuiltinESMExports();
  }
  t.is(loaded.documentDigest("abc"), "qZk+NkcGgWq6PiVxeFDCbJzQ2J0=");
});

test("policy file › given a file outside the plain subset and a pinned Kuma version, when read whole, then it is validated as that version would", async (t) => {
  // a name with capitals: Kuma 2.10+ wants an RFC 1123 name, 2.9 takes it
  const file = fileWith(t, `# a comment\n${deprecated("Orders", "backend")}`);
  t.deepEqual(stateOf(t, await read(file, { kumaVersion: "2.9" })).held.map((p) => p.name), ["Orders"]);
  t.deepEqual(stateOf(t, await read(file)).rejected.map((r) => r.name), ["Orders"]);
});

test("policy file › a document's digest is its SHA-1 in base64", (t) => {
  t.is(documentDigest("abc"), "qZk+NkcGgWq6PiVxeFDCbJzQ2J0=");
  t.is(documentDigest(""), "2jmj7l5rSw0yVb/vlWAYkK/YBwk=");
});
