// dir source scan › what DirPolicySource.scan()/resync() read, apply, report and log at the edges: file names, order, unreadable entries, concurrency, stop, rejections.
import test from "ava";
import { mkdtempSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { DirPolicySource, type DirSourceOptions } from "../../extproc/policy-source/dir-source.js";
import type { Dataplane } from "../../extproc/policy/documents/dataplane.js";
import type { Policy } from "../../extproc/policy/model/types.js";

/** A MeshTrafficPermission `name` on service `svc` (on the whole mesh without one) answering `action` to everyone. */
const mtp = (name: string, action = "Allow", svc?: string) =>
  `type: MeshTrafficPermission\nmesh: default\nname: ${name}\nspec:\n  targetRef:\n    kind: ${svc ? `MeshService\n    name: ${svc}` : "Mesh"}\n  from:\n    - targetRef:\n        kind: Mesh\n      default:\n        action: ${action}\n`;
const backend: Dataplane = { mesh: "default", name: "dp", proxyType: "Sidecar", inbounds: [{ name: "8080", port: 8080, tags: { "kuma.io/service": "backend" } }] };
const anHourAgo = () => new Date(Date.now() - 3_600_000);

interface Applied {
  names: string[];
  actions: string[];
  origin: string;
  total: number | undefined;
}
interface Logged {
  level: string;
  msg: string;
  obj: Record<string, unknown>;
}

function setup(t: import("ava").ExecutionContext, more: Partial<DirSourceOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "dir-source-scan-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const applied: Applied[] = [];
  const logs: Logged[] = [];
  const at = (level: string) => (obj: object, msg: string) => void logs.push({ level, msg, obj: obj as Record<string, unknown> });
  const apply = (p: Policy[], origin: string, _r: unknown, total?: number) =>
    void applied.push({ names: p.map((x) => x.name), actions: p.map((x) => `${x.name}:${x.spec.from?.[0]?.default?.action}`), origin, total });
  const opts: DirSourceOptions = { dir, apply, log: { info: at("info"), warn: at("warn"), error: at("error") }, rescanIntervalMs: 0, watchedRescanIntervalMs: 0, workerMinBytes: Infinity, ...more };
  const source = new DirPolicySource(opts);
  const path = (name: string) => join(dir, name);
  /** Writes `name`; settled: dated an hour back, so a read of it is final and a rescan does not read it again. */
  const write = (name: string, text: string, settled = false) => {
    writeFileSync(path(name), text);
    if (settled) utimesSync(path(name), anHourAgo(), anHourAgo());
  };
  const logged = (msg: string) => logs.filter((l) => l.msg === msg);
  return { dir, source, applied, logs, logged, path, write };
}

test("dir source scan › given backup copies next to policy files, when scanned, then only names ending in .yaml, .yml or .json are read", async (t) => {
  const s = setup(t);
  s.write("a.yaml", mtp("a"));
  s.write("a.yaml.bak", mtp("old-a"));
  s.write("b.json.orig", JSON.stringify({ type: "MeshTrafficPermission", mesh: "default", name: "old-b", spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Deny" } }] } }));
  s.write("c.yml.swp", mtp("old-c"));
  const report = await s.source.scan();
  t.deepEqual(report, { files: 1, policies: 1, rejected: [], applied: true });
  t.deepEqual(s.applied.at(-1)?.names, ["a"]);
});

test("dir source scan › given names that sort differently by UTF-8 bytes than by UTF-16 code units, then files are taken in JavaScript string order", async (t) => {
  const s = setup(t);
  // U+1F600 is D83D DE00 in UTF-16, before U+FF01; in UTF-8 (F0 …) it is after it (EF …), as a byte-wise listing has it
  s.write("\u{1F600}.yaml", mtp("p", "Allow"));
  s.write("\uFF01.yaml", mtp("p", "Deny"));
  await s.source.scan();
  t.deepEqual(s.applied.at(-1)?.actions, ["p:Deny"]);
});

test("dir source scan › given a loaded directory, when scanned, then apply is told the directory as origin and the load is logged with its counts", async (t) => {
  const s = setup(t);
  s.write("a.yaml", mtp("a") + "---\n" + mtp("b") + "---\ntype: MeshTrafficPermission\nmesh: default\nname: bad\nspec: {}\n");
  await s.source.scan();
  t.is(s.applied.at(-1)?.origin, `dir:${s.dir}`);
  const loaded = s.logged("policies loaded");
  t.deepEqual(loaded.map((l) => ({ level: l.level, ...l.obj })), [{ level: "info", dir: s.dir, files: 1, policies: 2, held: 2, rejected: 1 }]);
});

test("dir source scan › given an empty directory, when scanned and then resynced, then an empty set is applied each time and the source is loaded", async (t) => {
  const s = setup(t);
  t.deepEqual(await s.source.scan(), { files: 0, policies: 0, rejected: [], applied: true });
  t.true(s.source.loaded);
  t.deepEqual(s.applied.map((a) => a.names), [[]]);
  // when resynced: what it retains may have changed, so the (still empty) set is applied again
  await s.source.resync();
  t.deepEqual(s.applied.map((a) => a.names), [[], []]);
  // and a plain rescan of the unchanged directory applies nothing more
  t.deepEqual(await s.source.scan(), { files: 0, policies: 0, rejected: [], applied: false });
  t.is(s.applied.length, 2);
});

test("dir source scan › given two settled files, when one is deleted, then the rescan applies the set without its policies", async (t) => {
  const s = setup(t);
  s.write("a.yaml", mtp("a"), true);
  s.write("b.yaml", mtp("b"), true);
  await s.source.scan();
  unlinkSync(s.path("b.yaml"));
  t.deepEqual(await s.source.scan(), { files: 1, policies: 1, rejected: [], applied: true });
  t.deepEqual(s.applied.map((a) => a.names), [["a", "b"], ["a"]]);
});

test("dir source scan › given a settled file touched without a change, when rescanned, then it is read once, nothing is applied, and later rescans do not read it again", async (t) => {
  const registry = new Registry();
  const s = setup(t, { registry });
  const reads = async () => (await registry.getSingleMetric("meshext_policy_dir_files_read_total")!.get()).values[0]?.value ?? 0;
  s.write("a.yaml", mtp("a"), true);
  await s.source.scan();
  t.is(await reads(), 1);
  // when its times change (still well in the past) but not its text
  const twoHoursAgo = new Date(Date.now() - 7_200_000);
  utimesSync(s.path("a.yaml"), twoHoursAgo, twoHoursAgo);
  t.deepEqual(await s.source.scan(), { files: 1, policies: 1, rejected: [], applied: false });
  t.is(await reads(), 2, "read again: its stamp changed");
  t.is(s.applied.length, 1, "the same set is not applied again");
  await s.source.scan();
  await s.source.scan();
  t.is(await reads(), 2, "its new stamp is kept: not read again");
});

test("dir source scan › given scans requested while one runs, then they share one more scan after it, whose report each caller gets", async (t) => {
  const s = setup(t);
  s.write("a.yaml", mtp("a"), true);
  const first = s.source.scan();
  const second = s.source.scan();
  const third = s.source.scan();
  t.is(second, third, "the requests during a scan share its follow-up");
  const [r1, r2, r3] = await Promise.all([first, second, third]);
  t.deepEqual(r1, { files: 1, policies: 1, rejected: [], applied: true });
  t.deepEqual(r2, { files: 1, policies: 1, rejected: [], applied: false });
  t.is(r3, r2);
  t.is(s.logged("policy files read").length, 1, "the follow-up ran after the first (which read the settled file), not beside it");
  // and once both are done, a new request runs a new scan
  s.write("a.yaml", mtp("a", "Deny"));
  t.deepEqual(await s.source.scan(), { files: 1, policies: 1, rejected: [], applied: true });
  t.deepEqual(s.applied.map((a) => a.actions), [["a:Allow"], ["a:Deny"]]);
});

test("dir source scan › given a resync requested while a scan runs, then the directory is read and applied again after that scan", async (t) => {
  const s = setup(t);
  s.write("a.yaml", mtp("a"), true);
  const scanning = s.source.scan();
  const resynced = s.source.resync();
  await Promise.all([scanning, resynced]);
  t.deepEqual(s.applied.map((a) => a.names), [["a"], ["a"]]);
  t.is(s.logged("policy files read").length, 2, "the resync read the settled file again");
});

test("dir source scan › given a scan in progress, when the source is stopped, then that scan applies nothing", async (t) => {
  const s = setup(t);
  s.write("a.yaml", mtp("a"));
  const scanning = s.source.scan();
  await s.source.stop();
  await scanning;
  t.deepEqual(s.applied, [], "a stopped source hands nothing over");
  t.false(s.source.loaded);
});

test("dir source scan › given a change that stop kept from being applied, when the stopped source rescans its unchanged settled files, then nothing is reported applied", async (t) => {
  const s = setup(t);
  s.write("a.yaml", mtp("a"), true);
  await s.source.scan();
  s.write("a.yaml", mtp("a", "Deny"), true);
  const scanning = s.source.scan();
  await s.source.stop();
  await scanning;
  t.deepEqual(await s.source.scan(), { files: 1, policies: 1, rejected: [], applied: false });
  t.deepEqual(s.applied.map((a) => a.actions), [["a:Allow"]]);
});

test("dir source scan › given a dangling symlink and a file whose read fails, when scanned, then each is logged, the rest applied, and the files keep their previous policies", async (t) => {
  const s = setup(t);
  s.write("a.yaml", mtp("a"));
  s.write("b.yaml", mtp("b"));
  symlinkSync(join(s.dir, "missing-target"), s.path("dangling.yaml"));
  symlinkSync("/proc/self/mem", s.path("unreadable.yaml")); // a regular file to stat whose read at offset 0 fails (EIO)
  t.deepEqual(await s.source.scan(), { files: 2, policies: 2, rejected: [], applied: true });
  t.deepEqual(s.applied.at(-1)?.names, ["a", "b"]);
  const unread = () => s.logs.filter((l) => l.msg === "cannot read policy file; keeping its previous policies").map((l) => ({ level: l.level, file: l.obj.file, err: Boolean(l.obj.err) }));
  t.deepEqual(unread(), [{ level: "warn", file: s.path("dangling.yaml"), err: true }, { level: "warn", file: s.path("unreadable.yaml"), err: true }]);
  // when b.yaml becomes a dangling symlink too, then b's policies stay in force
  unlinkSync(s.path("b.yaml"));
  symlinkSync(join(s.dir, "missing-target"), s.path("b.yaml"));
  t.deepEqual(await s.source.scan(), { files: 2, policies: 2, rejected: [], applied: false });
  t.deepEqual(s.applied.at(-1)?.names, ["a", "b"]);
  t.true(unread().some((l) => l.file === s.path("b.yaml")));
});

test("dir source scan › given no log and no refusal callback, when files cannot be read or a first load is refused, then scans still complete", async (t) => {
  const s = setup(t);
  s.write("a.yaml", mtp("a") + "---\ntype: MeshTrafficPermission\nmesh: default\nname: bad\nspec: {}\n");
  symlinkSync(join(s.dir, "missing-target"), s.path("dangling.yaml"));
  symlinkSync("/proc/self/mem", s.path("unreadable.yaml"));
  const applied: string[][] = [];
  const source = new DirPolicySource({ dir: s.dir, apply: (p) => void applied.push(p.map((x) => x.name)), rescanIntervalMs: 0, workerMinBytes: Infinity, requireValidFirstLoad: true });
  const report = await source.scan();
  t.deepEqual({ ...report, rejected: report.rejected.map((r) => r.name) }, { files: 1, policies: 0, rejected: ["bad"], applied: false });
  s.write("a.yaml", mtp("a"));
  t.deepEqual(await source.scan(), { files: 1, policies: 1, rejected: [], applied: true });
  t.deepEqual(applied, [["a"]]);
});

test("dir source scan › given a rejected document and requireValidFirstLoad, when a first load is refused, then the error log says why nothing is applied", async (t) => {
  const s = setup(t, { requireValidFirstLoad: true });
  s.write("a.yaml", "type: MeshTrafficPermission\nmesh: default\nname: bad\nspec: {}\n");
  await s.source.scan();
  t.deepEqual(s.logs.filter((l) => l.level === "error").map((l) => l.msg), ["policy documents rejected at the first load: nothing applied until they are fixed (or start with --allow-invalid-policies)"]);
});

test("dir source scan › given a document that does not parse and nothing else, then its rejection keeps no last good version", async (t) => {
  const s = setup(t);
  s.write("a.yaml", "type: [unclosed\n");
  await s.source.scan();
  t.deepEqual(s.source.rejected.map((r) => ({ kind: r.kind, name: r.name, keptLastGood: r.keptLastGood })), [{ kind: undefined, name: undefined, keptLastGood: false }]);
});

test("dir source scan › given a rejected Mesh that never had a good version, then its fail-closed stand-in is no last good version", async (t) => {
  const s = setup(t);
  s.write("mesh.yaml", "type: Mesh\nname: default\nmtls: {enabledBackend: 7}\n");
  await s.source.scan();
  t.deepEqual(s.source.rejected.map((r) => ({ kind: r.kind, name: r.name, keptLastGood: r.keptLastGood })), [{ kind: "Mesh", name: "default", keptLastGood: false }]);
});

test("dir source scan › given selectFor and a rejected policy whose only valid version cannot select this dataplane, then that dropped version counts as in force", async (t) => {
  const s = setup(t, { selectFor: () => backend });
  s.write("a.yaml", mtp("x", "Allow", "svc-x") + "---\n" + mtp("y", "Allow", "svc-y"));
  s.write("b.yaml", mtp("x", "ALLOW", "svc-x") + "---\n" + mtp("z", "ALLOW", "svc-z"));
  await s.source.scan();
  t.deepEqual(s.applied.at(-1)?.names, [], "x and y were dropped: they cannot select backend");
  t.deepEqual(s.source.rejected.map((r) => [r.name, r.keptLastGood]), [["x", true], ["z", false]]);
});

test("dir source scan › given a Kuma version, when scanned, then its validators decide what loads", async (t) => {
  // a name that is no RFC 1123 subdomain: rejected from Kuma 2.10 on, valid before
  const text = mtp("Not_A_Subdomain");
  const loose = setup(t, { kumaVersion: "2.9" });
  loose.write("a.yaml", text);
  t.deepEqual((await loose.source.scan()).rejected, []);
  t.deepEqual(loose.applied.at(-1)?.names, ["Not_A_Subdomain"]);
  const strict = setup(t);
  strict.write("a.yaml", text);
  t.deepEqual((await strict.source.scan()).rejected.map((r) => r.name), ["Not_A_Subdomain"]);
});
