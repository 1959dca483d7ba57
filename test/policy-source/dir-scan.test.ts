// dir scan › what one scan of a policy directory reads, reports, applies and logs (scan() called directly: no watching).
import test from "ava";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DirPolicySource, type DirSourceOptions } from "../../extproc/policy-source/dir-source.js";
import type { Policy } from "../../extproc/policy/model/types.js";

const mtp = (name: string, action = "Allow") => `type: MeshTrafficPermission\nmesh: default\nname: ${name}\nspec:\n  targetRef: {kind: Mesh}\n  from: [{targetRef: {kind: Mesh}, default: {action: ${action}}}]\n`;
const invalid = (name: string) => `type: MeshTrafficPermission\nname: ${name}\nmesh: default\nspec: {}\n`;

function setup(t: import("ava").ExecutionContext, more: Partial<DirSourceOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "dir-scan-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const applied: Policy[][] = [];
  const logs: Array<{ level: string; msg: string; obj: Record<string, unknown> }> = [];
  const at = (level: string) => (obj: object, msg: string) => void logs.push({ level, msg, obj: obj as Record<string, unknown> });
  const source = new DirPolicySource({ dir, apply: (p) => void applied.push(p), log: { info: at("info"), warn: at("warn"), error: at("error") }, rescanIntervalMs: 0, watchedRescanIntervalMs: 0, workerMinBytes: Infinity, ...more });
  return { dir, source, applied, logs, write: (name: string, text: string) => writeFileSync(join(dir, name), text) };
}

test("dir scan › given policy files, hidden files, other files and a directory, when scanned, then only the visible .yaml/.yml/.json files are read and applied", async (t) => {
  const s = setup(t);
  s.write("a.yaml", mtp("a"));
  s.write("b.YML", mtp("b"));
  s.write("c.json", JSON.stringify({ type: "MeshTrafficPermission", mesh: "default", name: "c", spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Deny" } }] } }));
  s.write(".hidden.yaml", mtp("hidden"));
  s.write("notes.txt", mtp("txt"));
  mkdirSync(join(s.dir, "sub.yaml"));
  const report = await s.source.scan();
  t.deepEqual(report, { files: 3, policies: 3, rejected: [], applied: true });
  t.deepEqual(s.applied.at(-1)?.map((p) => p.name).sort(), ["a", "b", "c"]);
  const read = s.logs.find((l) => l.msg === "policy files read");
  t.deepEqual(read && { level: read.level, files: read.obj.files, documents: read.obj.documents, dir: read.obj.dir }, { level: "info", files: 3, documents: 3, dir: s.dir });
});

test("dir scan › given a policy defined in two files, when scanned, then the file later by name wins", async (t) => {
  const s = setup(t);
  s.write("b.yaml", mtp("p", "Deny"));
  s.write("a.yaml", mtp("p", "Allow"));
  await s.source.scan();
  t.deepEqual(s.applied.at(-1)?.map((p) => `${p.name}:${p.spec.from?.[0]?.default?.action}`), ["p:Deny"]);
});

test("dir scan › given a scanned directory, when scanned again unchanged, then nothing is applied or read again and the report still counts the policies", async (t) => {
  const s = setup(t);
  s.write("a.yaml", mtp("a") + "---\n" + mtp("b"));
  const minuteAgo = new Date(Date.now() - 60_000);
  utimesSync(join(s.dir, "a.yaml"), minuteAgo, minuteAgo); // written well before the read: the read is settled
  await s.source.scan();
  const before = s.logs.length;
  const again = await s.source.scan();
  t.deepEqual(again, { files: 1, policies: 2, rejected: [], applied: false });
  t.is(s.applied.length, 1);
  t.deepEqual(s.logs.slice(before).map((l) => l.msg), [], "no file read, nothing loaded");
});

test("dir scan › given a directory that cannot be read, when scanned, then nothing is applied and the error is logged with the directory", async (t) => {
  const s = setup(t);
  const gone = join(s.dir, "missing");
  const source = new DirPolicySource({ dir: gone, apply: () => t.fail("nothing to apply"), log: { info: () => {}, warn: () => {}, error: (obj, msg) => void s.logs.push({ level: "error", msg, obj: obj as Record<string, unknown> }) }, rescanIntervalMs: 0 });
  t.deepEqual(await source.scan(), { files: 0, policies: 0, rejected: [], applied: false });
  const e = s.logs.find((l) => l.level === "error");
  t.is(e?.msg, "cannot read policy dir; keeping the current policies");
  t.is(e?.obj.dir, gone);
  t.truthy(e?.obj.err);
});

test("dir scan › given a rejected document and requireValidFirstLoad, when scanned, then nothing is applied until it is fixed, and each refusal is told", async (t) => {
  const refusals: number[] = [];
  const s = setup(t, { requireValidFirstLoad: true, onFirstLoadRefused: (r) => void refusals.push(r.length) });
  s.write("a.yaml", mtp("a") + "---\n" + invalid("bad"));
  const refused = await s.source.scan();
  t.deepEqual({ ...refused, rejected: refused.rejected.map((r) => r.name) }, { files: 1, policies: 0, rejected: ["bad"], applied: false });
  t.deepEqual(refusals, [1]);
  t.is(s.applied.length, 0);
  t.false(s.source.loaded);
  const err = s.logs.find((l) => l.level === "error");
  t.deepEqual(err && { dir: err.obj.dir, rejected: err.obj.rejected }, { dir: s.dir, rejected: 1 });
  t.true(s.logs.some((l) => l.level === "warn" && l.msg === "policy rejected" && l.obj.name === "bad"));
  s.write("a.yaml", mtp("a"));
  t.deepEqual(await s.source.scan(), { files: 1, policies: 1, rejected: [], applied: true });
  t.true(s.source.loaded);
});

test("dir scan › given a rejected document without requireValidFirstLoad, when scanned, then the valid policies are applied", async (t) => {
  const s = setup(t);
  s.write("a.yaml", mtp("a") + "---\n" + invalid("bad"));
  const r = await s.source.scan();
  t.deepEqual({ ...r, rejected: r.rejected.map((x) => x.name) }, { files: 1, policies: 1, rejected: ["bad"], applied: true });
  t.deepEqual(s.applied.at(-1)?.map((p) => p.name), ["a"]);
});

for (const incremental of [true, false]) {
  test(`dir scan › given incremental ${incremental}, when one document of a three-document file is edited, then a rescan parses ${incremental ? "only it" : "every document"}`, async (t) => {
    const s = setup(t, { incremental });
    // block style only: the plain YAML subset a file must be in to be read by documents
    const plain = (name: string, action = "Allow") => `type: MeshTrafficPermission\nmesh: default\nname: ${name}\nspec:\n  targetRef:\n    kind: Mesh\n  from:\n    - targetRef:\n        kind: Mesh\n      default:\n        action: ${action}\n`;
    s.write("a.yaml", [plain("a"), plain("b"), plain("c")].join("---\n"));
    await s.source.scan();
    s.write("a.yaml", [plain("a"), plain("b", "Deny"), plain("c")].join("---\n"));
    const before = s.logs.length;
    t.deepEqual(await s.source.scan(), { files: 1, policies: 3, rejected: [], applied: true });
    t.deepEqual(s.logs.slice(before).filter((l) => l.msg === "policy files read").map((l) => l.obj.documents), [incremental ? 1 : 3]);
  });
}

test("dir scan › given deprecated policies, some not selecting this dataplane, when scanned, then the held ones are each warned about with their file and the others only counted", async (t) => {
  const dataplane = { mesh: "default", name: "dp", proxyType: "Sidecar" as const, inbounds: [{ name: "8080", port: 8080, tags: { "kuma.io/service": "backend" } }] };
  const s = setup(t, { selectFor: () => dataplane });
  const onService = (name: string, svc: string) => `type: MeshTrafficPermission\nmesh: default\nname: ${name}\nspec:\n  targetRef: {kind: MeshService, name: ${svc}}\n  from: [{targetRef: {kind: MeshService, name: web}, default: {action: Allow}}]\n`;
  s.write("a.yaml", [onService("mine", "backend"), onService("other", "svc-x"), onService("third", "svc-y")].join("---\n"));
  await s.source.scan();
  const file = join(s.dir, "a.yaml");
  t.deepEqual(s.logs.filter((l) => l.msg === "policy uses deprecated Kuma fields").map((l) => ({ level: l.level, file: l.obj.file, kind: l.obj.kind, name: l.obj.name })), [{ level: "warn", file, kind: "MeshTrafficPermission", name: "mine" }]);
  t.deepEqual(s.logs.filter((l) => l.msg.startsWith("policies that cannot select this dataplane")).map((l) => ({ level: l.level, file: l.obj.file, policies: l.obj.policies })), [{ level: "info", file, policies: 2 }]);
});
