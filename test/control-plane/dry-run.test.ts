// PUT ?dryRun=true on the real control plane: a valid policy is checked, not stored, and answered with the
// dataplanes it would select (the _resources/dataplanes shape); an invalid one gets the usual 400; writes still need the token.
import test from "ava";
import { call, controlPlaneFor, dataplane, mtp } from "./helpers.js";

const onBackend = (name: string, action: "Allow" | "Deny" = "Deny") => ({ ...mtp(name, action), spec: { targetRef: { kind: "MeshService", name: "backend" }, from: [{ targetRef: { kind: "Mesh" }, default: { action } }] } });

test("dry run › a valid policy is not stored, and the answer lists the dataplanes it would select", async (t) => {
  // Given two backend dataplanes and one web dataplane
  const { cp } = await controlPlaneFor(t);
  for (const [name, service] of [["backend-1", "backend"], ["backend-2", "backend"], ["web-1", "web"]] as const) t.is((await call(cp.url, "PUT", `/meshes/default/dataplanes/${name}`, dataplane(name, service))).status, 201);
  // When a deny on backend is PUT as a dry run
  const reply = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/deny-backend?dryRun=true", onBackend("deny-backend"));
  // Then it is valid, would be created, and selects the two backend dataplanes
  t.is(reply.status, 200);
  t.like(reply.body, { dryRun: true, created: true, resource: { type: "MeshTrafficPermission", name: "deny-backend" } });
  t.deepEqual(reply.body.dataplanes, {
    total: 2,
    items: [
      { type: "Dataplane", mesh: "default", name: "backend-1", labels: {} },
      { type: "Dataplane", mesh: "default", name: "backend-2", labels: {} },
    ],
  });
  t.true(reply.body.warnings.some((w: string) => w.startsWith("spec.targetRef.kind: ")), "Kuma's deprecation warnings, as a real PUT gives them");
  // And nothing was stored
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions/deny-backend")).status, 404);
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions")).body.total, 0);
});

test("dry run › over a stored policy it says `created: false` and leaves the stored one as it was", async (t) => {
  const { cp } = await controlPlaneFor(t);
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", onBackend("p", "Allow"))).status, 201);
  const reply = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p?dryRun=true", onBackend("p", "Deny"));
  t.is(reply.status, 200);
  t.is(reply.body.created, false);
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions/p")).body.spec.from[0].default.action, "Allow");
});

test("dry run › an invalid policy gets the PUT's own 400 with every violation; nothing is stored", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const bad = { ...mtp("bad"), spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Nope" }, default: { action: "Maybe" } }] } };
  const reply = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/bad?dryRun=true", bad);
  t.is(reply.status, 400);
  t.deepEqual(reply.body.invalid_parameters.map((p: { field: string }) => p.field).sort(), ["spec.from[0].default.action", "spec.from[0].targetRef.kind"]);
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions/bad")).status, 404);
});

test("dry run › still a write: a control plane with a token refuses it without the token", async (t) => {
  const { cp } = await controlPlaneFor(t, { token: "s3cret" });
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p?dryRun=true", mtp("p"))).status, 401);
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p?dryRun=true", mtp("p"), { authorization: "Bearer s3cret" })).status, 200);
});
