// Store edges: mesh names that would collide with the store's own file names (`coll` vs `coll.yaml`) are
// refused with a 400, and a full disk during a write answers 507 and leaves no `.tmp-*` file (a real
// tmpfs, mounted for the test).
import test from "ava";
import { readdirSync } from "node:fs";
import { mountTmpfs } from "../helpers/tmpfs.js";
import { call, mtp, startTestControlPlane, tempDir } from "./helpers.js";

const strictMesh = (name: string) => ({ type: "Mesh", name, mtls: { enabledBackend: "ca-1", backends: [{ name: "ca-1", type: "builtin" }] } });

test("store edges › given a Mesh `coll`, when a mesh named `coll.yaml` would get resources (or a Mesh `coll.yaml`), then both are refused with 400 and `coll` stays readable", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  t.is((await call(cp.url, "PUT", "/meshes/coll", strictMesh("coll"))).status, 201);
  const scoped = await call(cp.url, "PUT", "/meshes/coll.yaml/meshtrafficpermissions/p", { ...mtp("p"), mesh: "coll.yaml" });
  t.is(scoped.status, 400, JSON.stringify(scoped.body));
  t.regex(JSON.stringify(scoped.body), /\.yaml/);
  const global = await call(cp.url, "PUT", "/meshes/coll.yaml", strictMesh("coll.yaml"));
  t.is(global.status, 400, JSON.stringify(global.body));
  t.is((await call(cp.url, "GET", "/meshes/coll")).status, 200);
  t.is((await call(cp.url, "PUT", "/meshes/coll/meshtrafficpermissions/p", { ...mtp("p"), mesh: "coll" })).status, 201);
});


const allFiles = (dir: string): string[] => readdirSync(dir, { recursive: true, encoding: "utf8" });

test("store edges › given a disk that fills up, when resources are written, then a write that does not fit answers 507 and leaves no temp file", async (t) => {
  const dir = mountTmpfs(t, 128);
  if (!dir) {
    t.pass("skipped: no tmpfs (printed above)");
    return;
  }
  const cp = await startTestControlPlane(dir);
  t.teardown(() => cp.stop());
  const big = (i: number) => ({ ...mtp(`p${i}`), labels: { note: "x".repeat(40_000) } });
  let full: { status: number; body: unknown } | undefined;
  for (let i = 0; i < 20 && !full; i++) {
    const r = await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/p${i}`, big(i));
    if (r.status !== 201) full = r;
  }
  t.truthy(full, "the disk never filled");
  t.is(full?.status, 507, JSON.stringify(full?.body));
  t.deepEqual(allFiles(dir).filter((f) => f.split("/").pop()!.startsWith(".tmp-")), []);
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions/p0")).status, 200, "what was stored still reads");
});
