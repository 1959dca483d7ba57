// Every resource the engine decides with keeps its last good version, like the policies: an invalid new
// Mesh never turns mTLS off (which would flip deny-by-default to allow-all), an invalid Mesh that never had a
// good version counts as mTLS on, and a document whose type is not an exact kind (`meshtrafficpermission`)
// never drops the policy it would replace. Both sources: the control plane and a policy directory.
import test from "ava";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DirPolicySource } from "../../extproc/policy-source/dir-source.js";
import { dataplaneFromTags } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { NO_RESOURCES } from "../../extproc/policy/documents/resources.js";
import { eventually } from "../control-plane/helpers.js";
import { startFakeKuma } from "./fake-kuma.js";
import { inboundFacts as facts, sourceFor } from "./harness.js";

const STRICT_MESH = { type: "Mesh", name: "default", creationTime: "2026-01-01T00:00:00Z", mtls: { enabledBackend: "ca-1", backends: [{ name: "ca-1", type: "builtin" }] } };
/** Invalid: `enabledBackend` names no backend. */
const BROKEN_MESH = { ...STRICT_MESH, mtls: { enabledBackend: "ca-2", backends: [{ name: "ca-1", type: "builtin" }] } };
/** An MTP that selects some other service: the backend inbound is selected by none (deny by default under mTLS). */
const OTHER_MTP = {
  type: "MeshTrafficPermission",
  mesh: "default",
  name: "other",
  spec: { targetRef: { kind: "MeshService", name: "other" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Allow" } }] },
};
const denyIntruder = (type = "MeshTrafficPermission") => ({
  type,
  mesh: "default",
  name: "deny-intruder",
  spec: { targetRef: { kind: "MeshService", name: "backend" }, from: [{ targetRef: { kind: "MeshService", name: "intruder" }, default: { action: "Deny" } }] },
});
const ALLOW_ALL = {
  type: "MeshTrafficPermission",
  mesh: "default",
  name: "allow-all",
  spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Allow" } }] },
};

function newEngine() {
  return new PolicyEngine({ dataplane: dataplaneFromTags("default", "kuma.io/service=backend", "backend-1").dataplane!, trustKumaTagsHeader: true });
}

async function httpSetup(t: import("ava").ExecutionContext) {
  const kuma = await startFakeKuma(100);
  const engine = newEngine();
  const harness = sourceFor(kuma.url, { pollIntervalMs: 50, apply: (policies, _origin, resources) => void engine.replace(policies, resources ?? NO_RESOURCES) });
  t.teardown(async () => {
    await harness.source.stop();
    await kuma.close();
  });
  // Waits for the rejection itself, not for a number of sync attempts: under load an attempt can time out, and
  // the one after it may still be in flight when a count of attempts says the change was read.
  const rejectedOnce = async () => t.true(await eventually(() => harness.source.rejected.length > 0), "the new version was read and rejected");
  return { kuma, engine, ...harness, rejectedOnce };
}

const denied = (engine: PolicyEngine, client = "web") => engine.decide(facts(client)).type === "respond";

test("fail-closed › control plane: given mTLS on and no MTP selecting the inbound (deny), when a new Mesh version is invalid, then the last good Mesh stays and the inbound still denies", async (t) => {
  const { kuma, engine, source, rejectedOnce } = await httpSetup(t);
  kuma.items.set("meshtrafficpermissions", [OTHER_MTP]);
  kuma.items.set("meshes", [STRICT_MESH]);
  await source.start();
  t.true(denied(engine), "mTLS on, no MTP for backend: deny by default");
  // when
  kuma.items.set("meshes", [BROKEN_MESH]);
  await rejectedOnce();
  // then
  t.true(denied(engine), "the invalid Mesh did not turn mTLS off");
  const [rejected] = source.rejected;
  t.like(rejected, { kind: "Mesh", name: "default", keptLastGood: true });
  t.regex(JSON.stringify(rejected?.violations), /mtls\.enabledBackend/);
});

test("fail-closed › control plane: given a Mesh that never had a good version, when it is rejected, then it counts as mTLS on (deny by default), never as no Mesh", async (t) => {
  const { kuma, engine, source } = await httpSetup(t);
  kuma.items.set("meshtrafficpermissions", [OTHER_MTP]);
  kuma.items.set("meshes", [BROKEN_MESH]);
  await source.start();
  t.true(denied(engine));
  t.like(source.rejected[0], { kind: "Mesh", name: "default", keptLastGood: false });
});

test("fail-closed › control plane: given a Deny in force, when a new version has type `meshtrafficpermission` (lower case), then it is rejected and the Deny stays", async (t) => {
  const { kuma, engine, source, rejectedOnce } = await httpSetup(t);
  kuma.items.set("meshtrafficpermissions", [denyIntruder(), ALLOW_ALL]);
  await source.start();
  t.true(denied(engine, "intruder"));
  // when
  kuma.items.set("meshtrafficpermissions", [denyIntruder("meshtrafficpermission"), ALLOW_ALL]);
  await rejectedOnce();
  // then
  t.true(denied(engine, "intruder"), "a mis-cased type did not drop the Deny");
  t.like(source.rejected[0], { kind: "meshtrafficpermission", name: "deny-intruder" });
  t.regex(JSON.stringify(source.rejected[0]?.violations), /"field":"type"/);
});

function dirSetup(t: import("ava").ExecutionContext) {
  const dir = mkdtempSync(join(tmpdir(), "meshext-fail-closed-"));
  const engine = newEngine();
  const source = new DirPolicySource({ dir, apply: (policies, _o, resources) => void engine.replace(policies, resources ?? NO_RESOURCES), rescanIntervalMs: 0, watchedRescanIntervalMs: 0, debounceMs: 10_000 });
  t.teardown(async () => {
    await source.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const write = (file: string, docs: unknown[]) => writeFileSync(join(dir, file), docs.map((d) => JSON.stringify(d)).join("\n---\n"));
  return { dir, engine, source, write };
}

const { creationTime: _c, ...STRICT_MESH_FILE } = STRICT_MESH;
const { creationTime: _b, ...BROKEN_MESH_FILE } = BROKEN_MESH;

test("fail-closed › directory: given mTLS on and no MTP selecting the inbound, when the Mesh file turns invalid, then the last good Mesh stays (deny)", async (t) => {
  const { engine, source, write } = dirSetup(t);
  write("mesh.yaml", [STRICT_MESH_FILE]);
  write("mtp.yaml", [OTHER_MTP]);
  await source.start();
  t.true(denied(engine));
  // when
  write("mesh.yaml", [BROKEN_MESH_FILE]);
  await source.scan();
  // then
  t.true(denied(engine), "the invalid Mesh did not turn mTLS off");
  t.like(source.rejected[0], { kind: "Mesh", name: "default", keptLastGood: true });
});

test("fail-closed › directory: given an invalid Mesh that never had a good version, then it counts as mTLS on (deny)", async (t) => {
  const { engine, source, write } = dirSetup(t);
  write("mesh.yaml", [BROKEN_MESH_FILE]);
  write("mtp.yaml", [OTHER_MTP]);
  await source.start();
  t.true(denied(engine));
});

test("fail-closed › directory: given a MeshService in force, when its new version is invalid, then the last good version stays", async (t) => {
  const applied: Array<string[]> = [];
  const dir = mkdtempSync(join(tmpdir(), "meshext-fail-closed-"));
  const source = new DirPolicySource({ dir, apply: (_p, _o, resources) => void applied.push((resources?.services ?? []).map((s) => `${s.name}:${s.ports.map((p) => p.port).join(",")}`)), rescanIntervalMs: 0, watchedRescanIntervalMs: 0, debounceMs: 10_000 });
  t.teardown(async () => {
    await source.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const svc = (port: number) => ({ type: "MeshService", mesh: "default", name: "orders", spec: { ports: [{ port }] } });
  writeFileSync(join(dir, "svc.yaml"), JSON.stringify(svc(8080)));
  await source.start();
  t.deepEqual(applied.at(-1), ["orders:8080"]);
  writeFileSync(join(dir, "svc.yaml"), JSON.stringify(svc(0)));
  await source.scan();
  t.deepEqual(applied.at(-1), ["orders:8080"]);
  t.like(source.rejected[0], { kind: "MeshService", name: "orders", keptLastGood: true });
});

test("fail-closed › directory: given a Deny in force, when its new version's type is mis-cased, then the Deny stays", async (t) => {
  const { engine, source, write } = dirSetup(t);
  write("mtp.yaml", [denyIntruder(), ALLOW_ALL]);
  await source.start();
  t.true(denied(engine, "intruder"));
  write("mtp.yaml", [denyIntruder("meshtrafficpermission"), ALLOW_ALL]);
  await source.scan();
  t.true(denied(engine, "intruder"));
  t.like(source.rejected[0], { kind: "meshtrafficpermission", name: "deny-intruder", keptLastGood: true });
});
