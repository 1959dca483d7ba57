// ResourceStore on its own (no HTTP): files on disk, ordering of lists, the write queue, change events and revisions, and what a restart loads or skips.
import test from "ava";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Writable } from "node:stream";
import { CONTAINER_PATCH_TYPE, DATAPLANE_TYPE, MESH_TYPE, typeByPlural, type Resource, type ResourceType } from "../../extproc/kuma-rest/resources.js";
import { createLogger } from "../../extproc/log.js";
import { ResourceStore, type StoreChange } from "../../extproc/control-plane/store.js";
import { mtp, tempDir } from "./helpers.js";

const MTP: ResourceType = typeByPlural("meshtrafficpermissions")!;
const T0 = new Date("2026-01-02T03:04:05.000Z");
const T1 = new Date("2026-01-02T03:09:05.000Z");

type LogLine = { level: number; msg: string } & Record<string, unknown>;

/** A store on a fresh temp dir with its log lines captured; removed when the test ends. */
async function openStore(t: { teardown(fn: () => Promise<void> | void): void }, dir?: string) {
  const own = dir === undefined ? await tempDir() : undefined;
  if (own) t.teardown(() => own.remove());
  const dataDir = dir ?? own!.path;
  const lines: LogLine[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(...String(chunk).split("\n").filter(Boolean).map((l) => JSON.parse(l) as LogLine)), done()) });
  const store = await ResourceStore.open(dataDir, createLogger("info", sink));
  const changes: StoreChange[] = [];
  store.on("change", (c) => changes.push(c));
  return { store, dataDir, lines, changes };
}

const policy = (name: string, mesh = "default") => mtp(name, "Allow", mesh) as Resource;

test("store › given a new policy, when it is put, then its file holds the header and the stamped resource and a second put keeps creationTime", async (t) => {
  const { store, dataDir, changes } = await openStore(t);
  const first = await store.put(MTP, policy("p"), T0);
  t.true(first.created);
  t.is(first.resource.creationTime, T0.toISOString());
  t.is(first.resource.modificationTime, T0.toISOString());
  const text = await readFile(join(dataDir, "meshes", "default", "meshtrafficpermissions", "p.yaml"), "utf8");
  t.true(text.startsWith("# Managed by the meshext control plane. Edits here are read at its next start; prefer PUT through the API.\n"), text);
  t.regex(text, /^type: MeshTrafficPermission$/m);
  t.regex(text, /^creationTime: 2026-01-02T03:04:05.000Z$/m);
  const second = await store.put(MTP, { ...policy("p"), labels: { v: "2" } }, T1);
  t.false(second.created);
  t.is(second.resource.creationTime, T0.toISOString());
  t.is(second.resource.modificationTime, T1.toISOString());
  t.deepEqual(store.get("MeshTrafficPermission", "default", "p")?.labels, { v: "2" });
  t.deepEqual(changes, [
    { kind: "MeshTrafficPermission", mesh: "default", name: "p", op: "put" },
    { kind: "MeshTrafficPermission", mesh: "default", name: "p", op: "put" },
  ]);
  t.is(store.revision, 2);
});

test("store › given policies in several meshes put out of order, when listing, then they come sorted by mesh then name, and a mesh filter keeps only that mesh", async (t) => {
  const { store } = await openStore(t);
  for (const [mesh, name] of [["zeta", "b"], ["alpha", "c"], ["zeta", "a"], ["alpha", "a"], ["mid", "b"]] as const) await store.put(MTP, policy(name, mesh));
  t.deepEqual(store.list("MeshTrafficPermission").map((r) => `${r.mesh}/${r.name}`), ["alpha/a", "alpha/c", "mid/b", "zeta/a", "zeta/b"]);
  t.deepEqual(store.list("MeshTrafficPermission", "zeta").map((r) => r.name), ["a", "b"]);
  t.deepEqual(store.list("MeshTrafficPermission", "nowhere"), []);
  t.deepEqual(store.list("NoSuchKind"), []);
  t.is(store.get("NoSuchKind", "alpha", "a"), undefined);
});

test("store › given Mesh resources and resources in other meshes, when listing meshes, then default, the Mesh names and the meshes in use come once each, sorted", async (t) => {
  const { store } = await openStore(t);
  t.deepEqual(store.meshes(), ["default"]);
  await store.putGlobal(MESH_TYPE, { type: "Mesh", name: "web" });
  await store.putGlobal(MESH_TYPE, { type: "Mesh", name: "default" });
  await store.put(MTP, policy("p", "apps"));
  await store.put(MTP, policy("q", "web"));
  await store.put(DATAPLANE_TYPE, { type: "Dataplane", mesh: "zoo", name: "d" });
  t.deepEqual(store.meshes(), ["apps", "default", "web", "zoo"]);
});

test("store › given global resources, when put, listed and deleted, then their files sit under DATA_DIR/<plural>, lists are sorted by name and changes carry no mesh", async (t) => {
  const { store, dataDir, changes } = await openStore(t);
  const created = await store.putGlobal(CONTAINER_PATCH_TYPE, { type: "ContainerPatch", name: "zz" }, T0);
  t.true(created.created);
  t.is(created.resource.creationTime, T0.toISOString());
  await store.putGlobal(CONTAINER_PATCH_TYPE, { type: "ContainerPatch", name: "aa" });
  await store.putGlobal(MESH_TYPE, { type: "Mesh", name: "m" });
  const again = await store.putGlobal(CONTAINER_PATCH_TYPE, { type: "ContainerPatch", name: "zz" }, T1);
  t.false(again.created);
  t.is(again.resource.creationTime, T0.toISOString());
  t.is(again.resource.modificationTime, T1.toISOString());
  t.true((await readFile(join(dataDir, "containerpatches", "zz.yaml"), "utf8")).startsWith("# Managed by the meshext control plane."));
  t.true((await readFile(join(dataDir, "meshes", "m.yaml"), "utf8")).includes("type: Mesh"));
  t.deepEqual(store.listGlobal("ContainerPatch").map((r) => r.name), ["aa", "zz"]);
  t.deepEqual(store.listGlobal("NoSuchKind"), []);
  t.is(store.getGlobal("ContainerPatch", "aa")?.name, "aa");
  t.is(store.getGlobal("NoSuchKind", "aa"), undefined);
  t.false(await store.deleteGlobal(CONTAINER_PATCH_TYPE, "missing"));
  t.is(store.revision, 4);
  t.true(await store.deleteGlobal(CONTAINER_PATCH_TYPE, "aa"));
  t.is(store.getGlobal("ContainerPatch", "aa"), undefined);
  t.deepEqual(await readdir(join(dataDir, "containerpatches")), ["zz.yaml"]);
  t.is(store.revision, 5);
  t.deepEqual(changes, [
    { kind: "ContainerPatch", name: "zz", op: "put" },
    { kind: "ContainerPatch", name: "aa", op: "put" },
    { kind: "Mesh", name: "m", op: "put" },
    { kind: "ContainerPatch", name: "zz", op: "put" },
    { kind: "ContainerPatch", name: "aa", op: "delete" },
  ]);
});

test("store › given a stored policy, when deleted, then its file goes, the change is announced once, and deleting it again resolves false and changes nothing", async (t) => {
  const { store, dataDir, changes } = await openStore(t);
  await store.put(MTP, policy("p"));
  await store.put(MTP, policy("q"));
  t.true(await store.delete(MTP, "default", "p"));
  t.is(store.get("MeshTrafficPermission", "default", "p"), undefined);
  t.deepEqual(await readdir(join(dataDir, "meshes", "default", "meshtrafficpermissions")), ["q.yaml"]);
  t.false(await store.delete(MTP, "default", "p"));
  t.false(await store.delete(MTP, "other", "q"));
  t.is(store.revision, 3);
  t.deepEqual(changes.at(-1), { kind: "MeshTrafficPermission", mesh: "default", name: "p", op: "delete" });
  t.is(changes.length, 3);
});

test("store › given update(), when the resource is missing, the change declines, or it returns a replacement, then only the replacement is written", async (t) => {
  const { store, changes } = await openStore(t);
  let calls = 0;
  t.is(await store.update(MTP, "default", "p", () => (calls++, policy("p"))), undefined);
  t.is(calls, 0, "no change function for a missing resource");
  await store.put(MTP, policy("p"), T0);
  const kept = await store.update(MTP, "default", "p", () => undefined);
  t.is(kept?.modificationTime, T0.toISOString());
  t.is(store.revision, 1);
  const replaced = await store.update(MTP, "default", "p", (current) => ({ ...current, labels: { seen: String(current.creationTime) } }));
  t.deepEqual(replaced?.labels, { seen: T0.toISOString() });
  t.is(replaced?.creationTime, T0.toISOString());
  t.not(replaced?.modificationTime, T0.toISOString());
  t.deepEqual(store.get("MeshTrafficPermission", "default", "p")?.labels, { seen: T0.toISOString() });
  t.is(store.revision, 2);
  t.is(changes.length, 2);
});

test("store › given queued writes of one resource, when they run, then hasPendingWrite holds until the last has finished, and is per resource", async (t) => {
  const { store } = await openStore(t);
  t.false(store.hasPendingWrite("MeshTrafficPermission", "default", "p"));
  const a = store.put(MTP, policy("p"));
  const b = store.put(MTP, policy("p"));
  t.true(store.hasPendingWrite("MeshTrafficPermission", "default", "p"));
  t.false(store.hasPendingWrite("MeshTrafficPermission", "default", "q"));
  t.false(store.hasPendingWrite("Dataplane", "default", "p"));
  await a;
  t.true(store.hasPendingWrite("MeshTrafficPermission", "default", "p"), "the second write is still queued");
  await b;
  t.false(store.hasPendingWrite("MeshTrafficPermission", "default", "p"));
  const d = store.delete(MTP, "default", "p");
  t.true(store.hasPendingWrite("MeshTrafficPermission", "default", "p"));
  await d;
  t.false(store.hasPendingWrite("MeshTrafficPermission", "default", "p"));
});

test("store › given a write that fails on disk, when later writes are queued, then the failure rejects alone, is not pending, and the next writes still run", async (t) => {
  const { store, dataDir, changes } = await openStore(t);
  await writeFile(join(dataDir, "meshes", "blocked"), "a file where the mesh directory would go");
  const failed = store.put(MTP, policy("p", "blocked"));
  const next = store.put(MTP, policy("p"));
  const failedGlobal = store.putGlobal(MESH_TYPE, { type: "Mesh", name: "blocked" });
  await t.throwsAsync(failed);
  t.false(store.hasPendingWrite("MeshTrafficPermission", "blocked", "p"));
  t.true((await next).created);
  t.true((await failedGlobal).created, "meshes/blocked.yaml is a different path from meshes/blocked");
  t.is(store.get("MeshTrafficPermission", "blocked", "p"), undefined);
  t.deepEqual(changes.map((c) => `${c.mesh ?? "-"}/${c.name}`), ["default/p", "-/blocked"]);
  t.is(store.revision, 2);
});

test("store › given writes still queued, when flush() resolves, then every one of them is on disk", async (t) => {
  const { store, dataDir } = await openStore(t);
  await writeFile(join(dataDir, "meshes", "blocked"), "a file where the mesh directory would go");
  for (const n of ["a", "b"]) void store.put(MTP, policy(n));
  void store.put(MTP, policy("x", "blocked")).catch(() => {});
  void store.put(MTP, policy("c"));
  await store.flush();
  t.deepEqual((await readdir(join(dataDir, "meshes", "default", "meshtrafficpermissions"))).sort(), ["a.yaml", "b.yaml", "c.yaml"]);
  t.is(store.revision, 3);
});

test("store › given a data dir written by an earlier store, when reopened, then every resource is back and the load is logged with its count", async (t) => {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  const before = await openStore(t, dir.path);
  await before.store.put(MTP, policy("p"), T0);
  await before.store.put(MTP, policy("q", "web"), T0);
  await before.store.putGlobal(MESH_TYPE, { type: "Mesh", name: "web" }, T0);
  await before.store.putGlobal(CONTAINER_PATCH_TYPE, { type: "ContainerPatch", name: "cp" }, T0);
  t.deepEqual(before.lines.at(0), { ...before.lines.at(0), msg: "control-plane store loaded", resources: 0, dataDir: dir.path });
  const after = await openStore(t, dir.path);
  t.deepEqual(after.store.get("MeshTrafficPermission", "default", "p"), before.store.get("MeshTrafficPermission", "default", "p"));
  t.deepEqual(after.store.list("MeshTrafficPermission").map((r) => `${r.mesh}/${r.name}`), ["default/p", "web/q"]);
  t.deepEqual(after.store.listGlobal("Mesh").map((r) => r.name), ["web"]);
  t.is(after.store.getGlobal("ContainerPatch", "cp")?.creationTime, T0.toISOString());
  t.deepEqual(after.store.meshes(), ["default", "web"]);
  t.is(after.store.revision, 0);
  const loaded = after.lines.filter((l) => l.msg === "control-plane store loaded");
  t.is(loaded.length, 1);
  t.is(loaded[0]!.resources, 4);
  t.is(loaded[0]!.level, 30);
  t.deepEqual(after.lines.filter((l) => l.level >= 40), [], "nothing was skipped");
});

test("store › given a temp file left by a killed write, when the store opens, then it is removed with a warning and the real file still loads", async (t) => {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  const first = await openStore(t, dir.path);
  await first.store.put(MTP, policy("p"));
  await first.store.putGlobal(MESH_TYPE, { type: "Mesh", name: "web" });
  const policyDir = join(dir.path, "meshes", "default", "meshtrafficpermissions");
  const leftover = join(policyDir, ".tmp-p.yaml.123.abcd");
  await writeFile(leftover, "type: MeshTrafficPermission\nname: half");
  const meshLeftover = join(dir.path, "meshes", ".tmp-web.yaml.1.ff");
  await writeFile(meshLeftover, "half");
  const { store, lines } = await openStore(t, dir.path);
  t.deepEqual(await readdir(policyDir), ["p.yaml"]);
  t.deepEqual(lines.filter((l) => l.level === 40).map((l) => [l.msg, l.path]), [["removed an unfinished write left by a crash", leftover], ["removed an unfinished write left by a crash", meshLeftover]]);
  t.false((await readdir(join(dir.path, "meshes"))).includes(".tmp-web.yaml.1.ff"));
  t.is(store.list("MeshTrafficPermission").length, 1);
  t.is(store.listGlobal("Mesh").length, 1);
});

/** Writes `files` (path under the data dir → text), opens a store there and returns it with its error lines. */
async function openWith(t: { teardown(fn: () => Promise<void> | void): void }, files: Record<string, string>) {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir.path, path, ".."), { recursive: true });
    await writeFile(join(dir.path, path), text);
  }
  const opened = await openStore(t, dir.path);
  const errors = opened.lines.filter((l) => l.level === 50).map((l) => ({ path: (l.path as string).slice(dir.path.length + 1), err: l.err, msg: l.msg }));
  return { ...opened, errors };
}

const SKIPPED = "skipped an unreadable resource file";

test("store › given hand-written files that are not resources of their path, when the store opens, then each is skipped with an error naming the file and the reason", async (t) => {
  const good = "type: MeshTrafficPermission\nmesh: default\nname: good\n";
  const { store, errors, lines } = await openWith(t, {
    "meshes/default/meshtrafficpermissions/good.yaml": good,
    "meshes/default/meshtrafficpermissions/list.yaml": "- a\n- b\n",
    "meshes/default/meshtrafficpermissions/scalar.yaml": "just text\n",
    "meshes/default/meshtrafficpermissions/empty.yaml": "",
    "meshes/default/meshtrafficpermissions/broken.yaml": "type: [unclosed\n",
    "meshes/default/meshtrafficpermissions/alias.yaml": "type: MeshTrafficPermission\nmesh: &m default\nname: alias\nlabels: { m: *m }\n",
    "meshes/default/meshtrafficpermissions/deep.yaml": "type: MeshTrafficPermission\nmesh: default\nname: deep\nspec: " + "[".repeat(100) + "]".repeat(100) + "\n",
    "meshes/default/meshtrafficpermissions/wrongname.yaml": "type: MeshTrafficPermission\nmesh: default\nname: other\n",
    "meshes/default/meshtrafficpermissions/wrongmesh.yaml": "type: MeshTrafficPermission\nmesh: web\nname: wrongmesh\n",
    "meshes/default/meshtrafficpermissions/wrongtype.yaml": "type: MeshHTTPRoute\nmesh: default\nname: wrongtype\n",
    "meshes/default/meshtrafficpermissions/README.txt": "not a resource: ignored without a word",
    "containerpatches/scoped.yaml": "type: ContainerPatch\nmesh: default\nname: scoped\n",
    "containerpatches/ok.yaml": "type: ContainerPatch\nname: ok\n",
  });
  t.deepEqual(store.list("MeshTrafficPermission").map((r) => r.name), ["good"]);
  t.deepEqual(store.listGlobal("ContainerPatch").map((r) => r.name), ["ok"]);
  const byFile = Object.fromEntries(errors.map((e) => [e.path, e.err]));
  t.true(errors.every((e) => e.msg === SKIPPED));
  const p = (f: string) => `meshes/default/meshtrafficpermissions/${f}`;
  t.deepEqual(Object.keys(byFile).sort(), [p("alias.yaml"), p("broken.yaml"), p("deep.yaml"), p("empty.yaml"), p("list.yaml"), p("scalar.yaml"), p("wrongmesh.yaml"), p("wrongname.yaml"), p("wrongtype.yaml"), "containerpatches/scoped.yaml"].sort());
  for (const f of ["list.yaml", "scalar.yaml", "empty.yaml"]) t.is(byFile[p(f)], "not a YAML mapping", f);
  t.is(byFile[p("deep.yaml")], "document nests deeper than 64 levels");
  t.regex(byFile[p("alias.yaml")] as string, /alias/i);
  t.is(byFile[p("wrongname.yaml")], "type/mesh/name must be MeshTrafficPermission/default/wrongname to live at this path");
  t.is(byFile[p("wrongmesh.yaml")], "type/mesh/name must be MeshTrafficPermission/default/wrongmesh to live at this path");
  t.is(byFile[p("wrongtype.yaml")], "type/mesh/name must be MeshTrafficPermission/default/wrongtype to live at this path");
  t.is(byFile["containerpatches/scoped.yaml"], "type/mesh/name must be ContainerPatch/(none)/scoped to live at this path");
  t.is(lines.find((l) => l.msg === "control-plane store loaded")?.resources, 2);
});

test("store › given a mesh directory whose name is not a resource name, when the store opens, then nothing under it is loaded", async (t) => {
  const { store, errors } = await openWith(t, {
    "meshes/_bad/meshtrafficpermissions/p.yaml": "type: MeshTrafficPermission\nmesh: _bad\nname: p\n",
    "meshes/ok/meshtrafficpermissions/p.yaml": "type: MeshTrafficPermission\nmesh: ok\nname: p\n",
    "meshes/ok.yaml": "type: Mesh\nname: ok\n",
  });
  t.deepEqual(store.list("MeshTrafficPermission").map((r) => `${r.mesh}/${r.name}`), ["ok/p"]);
  t.deepEqual(store.listGlobal("Mesh").map((r) => r.name), ["ok"]);
  t.deepEqual(store.meshes(), ["default", "ok"]);
  t.deepEqual(errors, []);
});

test("store › given a data dir that does not exist yet, when the store opens, then it is created with its meshes directory and starts empty", async (t) => {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  const dataDir = join(dir.path, "not", "yet");
  const { store } = await openStore(t, dataDir);
  t.deepEqual(await readdir(dataDir), ["meshes"]);
  t.deepEqual(store.list("MeshTrafficPermission"), []);
  t.is(store.revision, 0);
});
