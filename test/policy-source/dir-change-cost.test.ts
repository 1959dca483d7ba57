// dir source › what a one-policy change costs: deprecation warnings only for the documents a read parsed, a
// rescan soon after a burst of events (even one that does not stop), a document digest that tells one-character
// edits apart, a parse of plain texts that never loads the yaml library (what a parse worker starts with), and
// the dropped-key filter and exact line search that spare combining files a split of every key.
import test from "ava";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { DEBOUNCE_MS, DirPolicySource, MAX_DEBOUNCE_MS } from "../../extproc/policy-source/dir-source.js";
import { documentDigest } from "../../extproc/policy-source/policy-file.js";
import { keyFilter, mayHoldKey } from "../../extproc/policy-source/key-filter.js";
import { combine, hasLine } from "../../extproc/policy-source/combine-files.js";
import type { FileState } from "../../extproc/policy-source/policy-file.js";
import type { Policy } from "../../extproc/policy/model/types.js";
import type { Dataplane } from "../../extproc/policy/model/dataplane.js";

/** A MeshTrafficPermission on `from` (deprecated in 2.14: the engine warns) selecting `svc`. */
const mtp = (name: string, svc: string, action = "Allow") => stringify({ type: "MeshTrafficPermission", name, mesh: "default", spec: { targetRef: { kind: "MeshService", name: svc }, from: [{ targetRef: { kind: "Mesh" }, default: { action } }] } });

function logCollector() {
  const warned: Array<Record<string, unknown>> = [];
  const infos: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  return { warned, infos, log: { info: (obj: object, msg: string) => void infos.push({ obj: obj as Record<string, unknown>, msg }), warn: (obj: object) => void warned.push(obj as Record<string, unknown>), error: () => {} } };
}

const eventually = async (cond: () => boolean, timeoutMs = 5000) => {
  for (const start = Date.now(); Date.now() - start < timeoutMs; ) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 5));
  }
  return cond();
};

test("dir source › given a file of deprecated policies in force, when one of them is edited, then only the edited one is reported again", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "meshext-warn-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "p.yaml");
  writeFileSync(file, [mtp("a", "svc-a"), mtp("b", "svc-b"), mtp("c", "svc-c")].join("---\n"));
  const c = logCollector();
  const source = new DirPolicySource({ dir, apply: () => {}, log: c.log, rescanIntervalMs: 0, watchedRescanIntervalMs: 0 });
  await source.scan();
  const deprecated = () => c.warned.filter((w) => Array.isArray(w.warnings)).map((w) => w.name);
  t.deepEqual(deprecated(), ["a", "b", "c"], "the first read reports every deprecated policy");
  writeFileSync(file, [mtp("a", "svc-a"), mtp("b", "svc-b", "Deny"), mtp("c", "svc-c")].join("---\n"));
  const report = await source.scan();
  t.true(report.applied);
  t.deepEqual(deprecated(), ["a", "b", "c", "b"], "the edit reports the edited policy alone");
});

test("dir source › given a policy not selecting this dataplane uses deprecated fields, when another document of its file is edited, then it is not counted again", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "meshext-warn-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "p.yaml");
  writeFileSync(file, [mtp("mine", "backend"), mtp("other", "svc-x")].join("---\n"));
  const c = logCollector();
  const dataplane: Dataplane = { mesh: "default", name: "dp", proxyType: "Sidecar", inbounds: [{ name: "8080", port: 8080, tags: { "kuma.io/service": "backend" } }] };
  const source = new DirPolicySource({ dir, apply: () => {}, log: c.log, selectFor: () => dataplane, rescanIntervalMs: 0, watchedRescanIntervalMs: 0 });
  await source.scan();
  const notListed = () => c.infos.filter((i) => i.msg.startsWith("policies that cannot select")).map((i) => i.obj.policies);
  t.deepEqual(notListed(), [1]);
  writeFileSync(file, [mtp("mine", "backend", "Deny"), mtp("other", "svc-x")].join("---\n"));
  await source.scan();
  t.deepEqual(notListed(), [1], "the unchanged document is not counted a second time");
  t.deepEqual(c.warned.filter((w) => Array.isArray(w.warnings)).map((w) => w.name), ["mine", "mine"]);
});

test("dir source › given a followed directory, when a policy file is renamed in, then its change is applied within the debounce and a scan", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "meshext-debounce-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "p.yaml"), mtp("a", "svc-a"));
  const applied: number[] = [];
  const source = new DirPolicySource({ dir, apply: (p) => void applied.push(p.length), rescanIntervalMs: 0, watchedRescanIntervalMs: 0 });
  await source.start();
  t.teardown(() => source.stop());
  t.deepEqual(applied, [1]);
  writeFileSync(join(dir, "q.yaml"), mtp("b", "svc-b"));
  t.true(await eventually(() => applied.length === 2), "the new file is applied");
  t.deepEqual(applied, [1, 2]);
  t.true(DEBOUNCE_MS <= 50, "an edit waits tens of milliseconds, not hundreds, before it is read");
});

test("dir source › given events that never stop coming, when a policy changed among them, then it is applied while they still come", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "meshext-debounce-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "p.yaml"), mtp("a", "svc-a"));
  const applied: number[] = [];
  const source = new DirPolicySource({ dir, apply: (p) => void applied.push(p.length), rescanIntervalMs: 0, watchedRescanIntervalMs: 0 });
  await source.start();
  t.teardown(() => source.stop());
  let writing = true;
  // A dot file rewritten more often than the quiet time: every write is an event, none is a policy.
  const noise = (async () => {
    for (let i = 0; writing; i++) {
      writeFileSync(join(dir, ".scratch"), String(i));
      await new Promise((r) => setTimeout(r, Math.max(1, DEBOUNCE_MS / 5)));
    }
  })();
  writeFileSync(join(dir, "q.yaml"), mtp("b", "svc-b"));
  const inForce = await eventually(() => applied.length === 2, 20 * MAX_DEBOUNCE_MS);
  const stillWriting = writing;
  writing = false;
  await noise;
  t.true(inForce, "the change is applied");
  t.true(stillWriting, "before the events stopped");
});

test("document digest › one-character edits, reorderings and appended text of a policy document all get new digests", (t) => {
  const base = mtp("policy-1", "backend");
  const seen = new Map<string, string>([[documentDigest(base), base]]);
  const variants: string[] = [];
  for (let i = 0; i < base.length; i++) {
    for (const ch of ["x", "0", " ", "\n"]) if (base[i] !== ch) variants.push(base.slice(0, i) + ch + base.slice(i + 1));
    variants.push(base.slice(0, i) + base.slice(i + 1));
  }
  variants.push(base + " ", base.split("\n").reverse().join("\n"));
  for (let n = 0; n < 2000; n++) variants.push(mtp(`policy-${n}`, `svc-${n % 37}`));
  for (const v of variants) {
    const d = documentDigest(v);
    const before = seen.get(d);
    if (before !== undefined && before !== v) t.fail(`two texts share digest ${d}`);
    seen.set(d, v);
  }
  t.is(documentDigest(base), documentDigest(String(base)), "the same text, the same digest");
  t.true(seen.size > 2000);
});

test("policy file reader › given only plain-YAML texts, when a process reads policy files with it, then the yaml library is never loaded", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "meshext-noyaml-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "p.yaml"), [mtp("a", "svc-a"), mtp("b", "svc-b")].join("---\n"));
  writeFileSync(join(dir, "q.yaml"), "type: MeshTrafficPermission\nname: c\nmesh: default\nspec: {targetRef: {kind: Mesh}, from: [{targetRef: {kind: Mesh}, default: {action: Deny}}]}\n");
  const script = `
    import { createRequire } from "node:module";
    const { readPolicyFile } = await import(${JSON.stringify(new URL("../../extproc/policy-source/policy-file.js", import.meta.url).href)});
    const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes("/node_modules/yaml/"));
    const plain = await readPolicyFile({ file: ${JSON.stringify(join(dir, "p.yaml"))}, stamp: "s", mtimeMs: 0 }, async () => {});
    const afterPlain = loaded();
    const flow = await readPolicyFile({ file: ${JSON.stringify(join(dir, "q.yaml"))}, stamp: "s", mtimeMs: 0 }, async () => {});
    console.log(JSON.stringify({ plain: plain.state.held.map((p) => p.name), afterPlain, flow: flow.state.held.map((p) => p.name), afterFlow: loaded() }));
  `;
  const out = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: process.cwd(), encoding: "utf8" });
  t.is(out.status, 0, out.stderr);
  t.deepEqual(JSON.parse(out.stdout), { plain: ["a", "b"], afterPlain: false, flow: ["c"], afterFlow: true });
});

test("dropped-key filter › every key it was built from is a maybe, and few others are", (t) => {
  const keys = Array.from({ length: 3000 }, (_, i) => `MeshTrafficPermission/mesh-${i % 7}/p-${(i * 7919) % 100_003}`);
  const filter = keyFilter(keys);
  t.true(keys.every((k) => mayHoldKey(filter, k)), "no key it holds is ever ruled out");
  const others = Array.from({ length: 20_000 }, (_, i) => `MeshTrafficPermission/mesh-${i % 7}/q-${i}`);
  t.true(others.filter((k) => mayHoldKey(filter, k)).length < 100, "under 0.5 % false maybes");
  t.false(mayHoldKey(keyFilter([]), keys[0]!));
});

test("combining files › given a held policy whose key a later file drops, or only begins, ends or contains, then only the exact key replaces it", (t) => {
  const held = (name: string) => ({ type: "MeshTrafficPermission", mesh: "default", name, spec: {}, warnings: [] }) as unknown as Policy;
  const state = (policies: Policy[], dropped: string[]): FileState => ({ digest: "", stamp: "", settled: true, held: policies, dropped: dropped.join("\n"), droppedCount: dropped.length, droppedFilter: keyFilter(dropped), resources: [], rejected: [] });
  const key = (name: string) => `MeshTrafficPermission/default/${name}`;
  const first = state([held("a"), held("b"), held("c"), held("d")], []);
  // given a second file whose filter says "maybe" for every key: its list alone decides
  const later = { ...state([], [key("ab"), key("b"), `x${key("c")}`, key("d")]), droppedFilter: new Uint32Array(2).fill(0xffffffff) };
  const { policies, total } = combine([first, later]);
  t.deepEqual(policies.map((p) => p.name), ["a", "c"], "b and d are dropped by the later file; ab and xc are other keys");
  t.is(total, 6, "a, b, c, d, ab, xc");
  t.true(hasLine("x\ny", "y") && hasLine("x\ny", "x") && !hasLine("xy\nyx", "y") && !hasLine("", "y"));
});

test("combining files › given files that hold the same policy, or drop a held one without a key filter, then the later file's version wins and the total counts each policy once", (t) => {
  const held = (name: string, version: string) => ({ type: "MeshTrafficPermission", mesh: "default", name, spec: { version }, warnings: [] }) as unknown as Policy;
  const noFilter = (policies: Policy[], dropped: string[]): FileState => ({ digest: "", stamp: "", settled: true, held: policies, dropped: dropped.join("\n"), droppedCount: dropped.length, resources: [], rejected: [] });
  const { policies, total } = combine([noFilter([held("a", "1"), held("b", "1")], []), noFilter([], ["MeshTrafficPermission/default/a"]), noFilter([held("b", "2")], [])]);
  t.deepEqual(policies.map((p) => `${p.name}@${(p.spec as unknown as { version: string }).version}`), ["b@2"], "a: dropped by the second file (it has no filter); b: the third file's");
  t.is(total, 2, "a and b");
});
