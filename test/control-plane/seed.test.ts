// Seeding an empty control-plane store from a directory of Kuma YAML (seed.ts, what `meshext up` does with
// envoy/policies/): which files are read, what is stored, what is rejected and logged, and when a store counts as empty.
import test from "ava";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import { hasNoPolicies, seedFromDir } from "../../extproc/control-plane/seed.js";
import { ResourceStore } from "../../extproc/control-plane/store.js";
import { MESH_TYPE, POLICY_TYPES, SERVICE_TYPES } from "../../extproc/kuma-rest/resources.js";
import { silentLogger } from "../../extproc/log.js";
import { meshIdentity, mtp, recordingLogger, tempDir } from "./helpers.js";
import type { ExecutionContext } from "ava";

const yaml = (...docs: unknown[]) => docs.map((d) => stringify(d)).join("---\n");
const meshService = (name: string, port: unknown = 80, mesh?: string) => ({ type: "MeshService", ...(mesh ? { mesh } : {}), name, spec: { ports: [{ port }] } });

/** A store in a fresh temp dir and an empty seed directory beside it. */
async function seedSetup(t: ExecutionContext) {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  const seed = join(dir.path, "seed");
  await mkdir(seed);
  const store = await ResourceStore.open(join(dir.path, "data"), silentLogger());
  return { seed, store, write: (file: string, text: string) => writeFile(join(seed, file), text) };
}

test("seed › given no such directory, when seeding, then nothing is stored and a warning names the directory", async (t) => {
  const { seed, store } = await seedSetup(t);
  const { log, lines } = recordingLogger();
  const missing = join(seed, "absent");
  t.is(await seedFromDir(store, missing, log), 0);
  const [line, ...rest] = lines();
  t.like(line, { level: 40, dir: missing, msg: "no sample policies to seed the control plane with" });
  t.regex(String(line!.err), /ENOENT/);
  t.deepEqual(rest, []);
  t.true(hasNoPolicies(store));
});

test("seed › given .yaml, .yml and .json files beside other files, when seeding, then only the first three are read", async (t) => {
  const { seed, store, write } = await seedSetup(t);
  await write("a.yaml", yaml(mtp("from-yaml")));
  await write("b.yml", yaml(mtp("from-yml")));
  await write("c.json", JSON.stringify(mtp("from-json")));
  await write("d.yaml.bak", yaml(mtp("from-bak")));
  await write("e.txt", yaml(mtp("from-txt")));
  await write("fyaml", yaml(mtp("from-no-dot")));
  await write("g.YAML.orig", yaml(mtp("from-orig")));
  await mkdir(join(seed, "sub"));
  await writeFile(join(seed, "sub", "h.yaml"), yaml(mtp("from-sub")));
  const { log, lines } = recordingLogger();
  t.is(await seedFromDir(store, seed, log), 3);
  t.deepEqual(store.list("MeshTrafficPermission", "default").map((r) => r.name).sort(), ["from-json", "from-yaml", "from-yml"]);
  t.like(lines().at(-1), { level: 30, dir: seed, resources: 3, msg: "seeded the control plane with the sample policies and resources" });
});

test("seed › given files defining the same policy, when seeding, then the file last in string order of names wins", async (t) => {
  const { seed, store, write } = await seedSetup(t);
  // Node lists a directory in UTF-8 byte order, where U+FF21 comes before U+1F600; in string order (UTF-16) it comes after
  const files = { "a.yaml": "ascii", "\uFF21.yaml": "fullwidth", "\u{1F600}.yaml": "emoji" };
  for (const [file, label] of Object.entries(files)) await write(file, yaml({ ...mtp("same"), labels: { file: label } }));
  t.is(await seedFromDir(store, seed, silentLogger()), 3);
  t.deepEqual(store.get("MeshTrafficPermission", "default", "same")?.labels, { file: "fullwidth" });
});

test("seed › given a valid policy, when seeded, then it is stored as written, labels only when it has some", async (t) => {
  const { seed, store, write } = await seedSetup(t);
  await write("p.yaml", yaml(mtp("plain", "Deny"), { ...mtp("labelled"), labels: { team: "a" } }, { ...mtp("other-mesh", "Allow", "shop") }));
  t.is(await seedFromDir(store, seed, silentLogger()), 3);
  const plain = store.get("MeshTrafficPermission", "default", "plain")!;
  t.like(plain, { type: "MeshTrafficPermission", mesh: "default", name: "plain", spec: mtp("plain", "Deny").spec });
  t.false("labels" in plain);
  t.deepEqual(store.get("MeshTrafficPermission", "default", "labelled")?.labels, { team: "a" });
  t.truthy(store.get("MeshTrafficPermission", "shop", "other-mesh"));
  t.false(hasNoPolicies(store));
});

test("seed › given an invalid policy, when seeding, then it is skipped with a warning naming file, index, kind, name and violations", async (t) => {
  const { seed, store, write } = await seedSetup(t);
  const bad = { ...mtp("bad"), spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Maybe" } }] } };
  await write("p.yaml", yaml(mtp("good"), bad));
  const { log, lines } = recordingLogger();
  t.is(await seedFromDir(store, seed, log), 1);
  const warnings = lines().filter((l) => l.level === 40);
  t.is(warnings.length, 1);
  t.like(warnings[0], { file: join(seed, "p.yaml"), index: 1, kind: "MeshTrafficPermission", name: "bad", msg: "sample policy rejected" });
  t.deepEqual((warnings[0]!.violations as Array<{ field: string }>).map((v) => v.field), ["spec.from[0].default.action"]);
  t.deepEqual(store.list("MeshTrafficPermission").map((r) => r.name), ["good"]);
});

test("seed › given the Kuma version, when seeding, then policies are checked by that version's rules", async (t) => {
  const { seed, store, write } = await seedSetup(t);
  await write("p.yaml", yaml(mtp("uses-from")));
  // Kuma 3.0 removed `from`
  t.is(await seedFromDir(store, seed, silentLogger(), "3.0"), 0);
  t.true(hasNoPolicies(store));
  t.is(await seedFromDir(store, seed, silentLogger(), "2.14"), 1);
});

test("seed › given a Mesh, when seeding, then a valid one is stored as a global resource and an invalid one is logged", async (t) => {
  const { seed, store, write } = await seedSetup(t);
  await write("mesh.yaml", yaml({ type: "Mesh", name: "shop", mtls: { enabledBackend: "ca-1", backends: [{ name: "ca-1", type: "builtin" }] } }, { type: "Mesh", name: "broken", spec: {} }));
  const { log, lines } = recordingLogger();
  t.is(await seedFromDir(store, seed, log), 1);
  t.like(store.getGlobal(MESH_TYPE.kind, "shop"), { type: "Mesh", name: "shop", mtls: { enabledBackend: "ca-1" } });
  t.is(store.getGlobal(MESH_TYPE.kind, "broken"), undefined);
  const warnings = lines().filter((l) => l.level === 40);
  t.is(warnings.length, 1, JSON.stringify(warnings));
  t.like(warnings[0], { file: join(seed, "mesh.yaml"), kind: "Mesh", name: "broken", msg: "sample Mesh rejected" });
  t.deepEqual((warnings[0]!.violations as Array<{ field: string }>).map((v) => v.field), ["spec"]);
  // a Mesh is no policy
  t.true(hasNoPolicies(store));
});

test("seed › given service resources, when seeding, then valid ones are stored (mesh default unless given) and invalid ones logged once", async (t) => {
  const { seed, store, write } = await seedSetup(t);
  await write("services.yaml", yaml(meshService("web"), meshService("orders", 80, "shop"), meshService("bad", 0)));
  const { log, lines } = recordingLogger();
  t.is(await seedFromDir(store, seed, log), 2);
  t.like(store.get("MeshService", "default", "web"), { type: "MeshService", mesh: "default", name: "web", spec: { ports: [{ port: 80 }] } });
  t.truthy(store.get("MeshService", "shop", "orders"));
  t.is(store.get("MeshService", "default", "bad"), undefined);
  const warnings = lines().filter((l) => l.level === 40);
  t.is(warnings.length, 1, JSON.stringify(warnings));
  t.like(warnings[0], { file: join(seed, "services.yaml"), kind: "MeshService", name: "bad", msg: "sample resource rejected" });
  t.deepEqual((warnings[0]!.violations as Array<{ field: string }>).map((v) => v.field), ["spec.ports[0].port"]);
  t.true(hasNoPolicies(store));
});

test("seed › given identity resources, when seeding, then they are checked by the identity rules with their mesh", async (t) => {
  const { seed, store, write } = await seedSetup(t);
  const { mesh: _mesh, ...noMesh } = meshIdentity("orders", { app: "orders" });
  const bad = { ...meshIdentity("bad", { app: "web" }), spec: { provider: { type: "Bundled" } } };
  await write("identities.yaml", yaml(noMesh, bad));
  const { log, lines } = recordingLogger();
  t.is(await seedFromDir(store, seed, log), 1);
  t.like(store.get("MeshIdentity", "default", "orders"), { mesh: "default", name: "orders" });
  const warnings = lines().filter((l) => l.level === 40);
  t.is(warnings.length, 1, JSON.stringify(warnings));
  t.like(warnings[0], { kind: "MeshIdentity", name: "bad", msg: "sample resource rejected" });
});

test("seed › given documents that are not resources with a name, when seeding, then they are skipped", async (t) => {
  const { seed, store, write } = await seedSetup(t);
  await write("odd.yaml", yaml(["a", "list"], { type: "MeshService", name: 7, spec: { ports: [{ port: 80 }] } }, { type: "Mesh" }));
  t.is(await seedFromDir(store, seed, silentLogger()), 0);
  t.deepEqual(store.list("MeshService"), []);
  t.deepEqual(store.listGlobal(MESH_TYPE.kind), []);
});

test("seed › given the repository's sample policies, when seeding, then every document is stored and nothing is rejected", async (t) => {
  const { store } = await seedSetup(t);
  const { log, lines } = recordingLogger();
  const samples = join(process.cwd(), "envoy", "policies");
  const stored = await seedFromDir(store, samples, log);
  t.true(stored > 0);
  t.deepEqual(lines().filter((l) => l.level !== 30), []);
  t.like(lines().at(-1), { resources: stored });
  t.false(hasNoPolicies(store));
  // each policy under its own kind (fault-injection.yaml holds a MeshFaultInjection)
  t.like(store.get("MeshFaultInjection", "default", "backend-chaos"), { type: "MeshFaultInjection" });
  t.false(store.list("MeshTrafficPermission").some((r) => r.type !== "MeshTrafficPermission"));
});

test("seed › given a store, when asking whether it holds no policies, then every policy kind counts and nothing else does", async (t) => {
  for (const type of POLICY_TYPES) {
    const { store } = await seedSetup(t);
    t.true(hasNoPolicies(store));
    await store.putGlobal(MESH_TYPE, { type: "Mesh", name: "default" });
    await store.put(SERVICE_TYPES[0]!, { ...meshService("web"), mesh: "default" });
    t.true(hasNoPolicies(store), type.kind);
    const spec = type.kind === "MeshTrafficPermission" ? mtp("x").spec : { targetRef: { kind: "Mesh" } };
    await store.put(type, { type: type.kind, mesh: "default", name: "x", spec });
    t.false(hasNoPolicies(store), type.kind);
  }
});
