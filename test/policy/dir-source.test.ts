// dir-source › loads a directory, skips rejected documents, keeps the last good version, follows changes.
import test from "ava";
import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DirPolicySource } from "../../extproc/policy-source/dir-source.js";
import type { Dataplane } from "../../extproc/policy/documents/dataplane.js";
import type { Policy } from "../../extproc/policy/model/types.js";

const mtp = (name: string, action: string) => `type: MeshTrafficPermission
mesh: default
name: ${name}
spec:
  targetRef: {kind: Mesh}
  from: [{targetRef: {kind: Mesh}, default: {action: ${action}}}]
`;

function setup() {
  const dir = mkdtempSync(join(tmpdir(), "meshext-policies-"));
  const applied: Policy[][] = [];
  const warnings: object[] = [];
  const log = { info: () => {}, warn: (o: object) => void warnings.push(o), error: () => {} };
  const source = new DirPolicySource({ dir, apply: (p) => void applied.push(p), log, rescanIntervalMs: 0, debounceMs: 20 });
  return { dir, source, applied, warnings, done: () => rmSync(dir, { recursive: true, force: true }) };
}

const actions = (ps: Policy[] | undefined) => (ps ?? []).map((p) => `${p.name}:${p.spec.from?.[0]?.default?.action}`).sort();

test("dir-source › loads yaml, yml and json files and skips others", async (t) => {
  const s = setup();
  writeFileSync(join(s.dir, "a.yaml"), mtp("a", "Allow"));
  writeFileSync(join(s.dir, "b.yml"), mtp("b", "Deny"));
  writeFileSync(join(s.dir, "c.json"), JSON.stringify({ type: "MeshTrafficPermission", name: "c", spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Allow" } }] } }));
  writeFileSync(join(s.dir, "notes.txt"), "not a policy");
  await s.source.start();
  t.true(s.source.loaded);
  t.deepEqual(actions(s.applied.at(-1)), ["a:Allow", "b:Deny", "c:Allow"]);
  await s.source.stop();
  s.done();
});

test("dir-source › a rejected policy is logged with file, name and violations and keeps its last good version", async (t) => {
  const s = setup();
  writeFileSync(join(s.dir, "a.yaml"), mtp("a", "Allow") + "---\n" + mtp("b", "Deny"));
  await s.source.start();
  // when a is edited into an invalid action and b changes validly
  writeFileSync(join(s.dir, "a.yaml"), mtp("a", "ALLOW") + "---\n" + mtp("b", "Allow") + "\n# changed\n");
  const report = await s.source.scan();
  t.is(report.rejected.length, 1);
  t.deepEqual(actions(s.applied.at(-1)), ["a:Allow", "b:Allow"]);
  const w = s.warnings.find((o) => (o as { name?: string }).name === "a" && "violations" in o) as { file: string; violations: unknown[] } | undefined;
  t.truthy(w);
  t.true(w!.file.endsWith("a.yaml"));
  t.deepEqual(w!.violations, [{ field: "spec.from[0].default.action", message: "must be one of Allow, Deny, AllowWithShadowDeny" }]);
  await s.source.stop();
  s.done();
});

test("dir-source › a YAML syntax error keeps the file's previous policies; deleting a file removes them", async (t) => {
  const s = setup();
  writeFileSync(join(s.dir, "a.yaml"), mtp("a", "Allow"));
  writeFileSync(join(s.dir, "b.yaml"), mtp("b", "Deny"));
  await s.source.start();
  writeFileSync(join(s.dir, "a.yaml"), "type: [unclosed\n  nope: {");
  await s.source.scan();
  t.deepEqual(actions(s.applied.at(-1)), ["a:Allow", "b:Deny"]);
  rmSync(join(s.dir, "b.yaml"));
  await s.source.scan();
  t.deepEqual(actions(s.applied.at(-1)), ["a:Allow"]);
  await s.source.stop();
  s.done();
});

test("dir-source › follows changes through fs.watch without an explicit scan", async (t) => {
  const s = setup();
  await s.source.start();
  const before = s.applied.length;
  writeFileSync(join(s.dir, "new.yaml"), mtp("n", "Deny"));
  for (let i = 0; i < 100 && s.applied.length === before; i++) await new Promise((r) => setTimeout(r, 20));
  t.deepEqual(actions(s.applied.at(-1)), ["n:Deny"]);
  await s.source.stop();
  s.done();
});

test("dir-source › a missing directory does not throw and stays not loaded", async (t) => {
  const s = setup();
  const source = new DirPolicySource({ dir: join(s.dir, "missing"), apply: () => t.fail("nothing to apply"), rescanIntervalMs: 0 });
  await t.notThrowsAsync(() => source.start());
  t.false(source.loaded);
  await source.stop();
  s.done();
});

const onService = (name: string, service: string, action: string) => `type: MeshTrafficPermission
mesh: default
name: ${name}
spec:
  targetRef: {kind: MeshService, name: ${service}}
  from: [{targetRef: {kind: Mesh}, default: {action: ${action}}}]
`;
const dataplaneOf = (service: string): Dataplane => ({ mesh: "default", name: "dp", proxyType: "Sidecar", inbounds: [{ name: "8080", port: 8080, tags: { "kuma.io/service": service } }] });

for (const [how, workerMinBytes] of [["on the main thread", Infinity], ["in a worker thread", 0]] as const) {
  test(`dir-source › with selectFor, only what might select is handed over, a later file's same-named policy still replaces an earlier one, and resync re-selects (${how})`, async (t) => {
    // given a.yaml with x and keep on backend, and b.yaml redefining x on web; selecting for backend
    const dir = mkdtempSync(join(tmpdir(), "meshext-policies-"));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "a.yaml"), [onService("x", "backend", "Allow"), onService("keep", "backend", "Allow")].join("---\n"));
    writeFileSync(join(dir, "b.yaml"), onService("x", "web", "Deny"));
    const applied: Array<{ policies: Policy[]; total?: number }> = [];
    let dp = dataplaneOf("backend");
    const source = new DirPolicySource({ dir, apply: (policies, _o, _r, total) => void applied.push({ policies, total }), rescanIntervalMs: 0, selectFor: () => dp, workerMinBytes });
    // when loaded; then x (replaced by the web version, which is dropped) is gone, keep stays, and the total counts both
    await source.start();
    t.deepEqual(actions(applied.at(-1)?.policies), ["keep:Allow"]);
    t.is(applied.at(-1)?.total, 2);
    // when the dataplane becomes web and the source resyncs; then the whole directory is read and applied again
    dp = dataplaneOf("web");
    await source.resync();
    t.deepEqual(actions(applied.at(-1)?.policies), ["x:Deny"]);
    t.is(applied.length, 2);
    await source.stop();
  });
}

test("dir-source › a kind: Mesh document in the directory reaches apply as a resource", async (t) => {
  // given a directory with a Mesh (mTLS on) and a MeshService next to a policy; when loaded; then apply gets them
  const dir = mkdtempSync(join(tmpdir(), "meshext-policies-"));
  const got: unknown[] = [];
  const source = new DirPolicySource({ dir, apply: (_p, _o, resources) => void got.push(resources), rescanIntervalMs: 0 });
  writeFileSync(join(dir, "mesh.yaml"), "type: Mesh\nname: default\nmtls: {enabledBackend: ca-1}\n---\ntype: MeshService\nmesh: default\nname: orders\nspec: {ports: [{port: 8080}]}\n");
  writeFileSync(join(dir, "p.yaml"), mtp("a", "Allow"));
  await source.start();
  const resources = got.at(-1) as { meshes: Array<{ name: string; mtlsEnabled: boolean }>; services: Array<{ name: string }> };
  t.deepEqual(resources.meshes.map((m) => [m.name, m.mtlsEnabled]), [["default", true]]);
  t.deepEqual(resources.services.map((s) => s.name), ["orders"]);
  await source.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A watcher that never reports a change (as fs.watch on a filesystem that misses events); `fail()` makes it error. */
class SilentWatcher extends EventEmitter {
  closed = false;
  close(): void {
    this.closed = true;
  }
  fail(): void {
    this.emit("error", new Error("watch gone"));
  }
}

async function appliedWithin(applied: Policy[][], want: string[], ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 10))) {
    if (JSON.stringify(actions(applied.at(-1))) === JSON.stringify(want)) return true;
  }
  return false;
}

function rescanSetup(opts: { rescanIntervalMs: number; watchedRescanIntervalMs: number; watchDir: (dir: string, onChange: () => void) => SilentWatcher }) {
  const dir = mkdtempSync(join(tmpdir(), "meshext-policies-"));
  const applied: Policy[][] = [];
  const warnings: object[] = [];
  writeFileSync(join(dir, "a.yaml"), mtp("a", "Allow"));
  const source = new DirPolicySource({ dir, apply: (p) => void applied.push(p), log: { info: () => {}, warn: (o: object) => void warnings.push(o), error: () => {} }, debounceMs: 20, ...opts });
  return { dir, source, applied, warnings, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test("dir-source › given a working watch that misses a change, then the safety rescan finds it at the slow pace, not the fast one", async (t) => {
  const watcher = new SilentWatcher();
  const s = rescanSetup({ rescanIntervalMs: 20, watchedRescanIntervalMs: 600, watchDir: () => watcher });
  await s.source.start();
  // when a is changed and the watch says nothing
  writeFileSync(join(s.dir, "a.yaml"), mtp("a", "Deny"));
  // then the 20 ms pace is not in use, and the 600 ms safety rescan picks the change up
  t.false(await appliedWithin(s.applied, ["a:Deny"], 300));
  t.true(await appliedWithin(s.applied, ["a:Deny"], 3000));
  await s.source.stop();
  t.true(watcher.closed);
  s.done();
});

test("dir-source › given the watch fails, then it is closed, a warning is logged and rescans run at the fast pace", async (t) => {
  const watcher = new SilentWatcher();
  const s = rescanSetup({ rescanIntervalMs: 30, watchedRescanIntervalMs: 60_000, watchDir: () => watcher });
  await s.source.start();
  // when the watch errors and a then changes
  watcher.fail();
  writeFileSync(join(s.dir, "a.yaml"), mtp("a", "Deny"));
  // then a 30 ms rescan finds it long before the 60 s safety rescan would
  t.true(await appliedWithin(s.applied, ["a:Deny"], 2000));
  t.true(watcher.closed);
  t.true(s.warnings.some((w) => (w as { err?: Error }).err?.message === "watch gone"));
  await s.source.stop();
  s.done();
});

test("dir-source › given a directory that cannot be watched, then rescans run at the fast pace from the start", async (t) => {
  const s = rescanSetup({ rescanIntervalMs: 30, watchedRescanIntervalMs: 60_000, watchDir: () => { throw new Error("ENOSPC: inotify watches exhausted"); } });
  await s.source.start();
  writeFileSync(join(s.dir, "a.yaml"), mtp("a", "Deny"));
  t.true(await appliedWithin(s.applied, ["a:Deny"], 2000));
  t.true(s.warnings.some((w) => (w as { err?: Error }).err?.message.includes("inotify") === true));
  await s.source.stop();
  s.done();
});
