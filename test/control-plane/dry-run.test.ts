// PUT ?dryRun=true on the real control plane: a valid policy is checked, not stored, and answered with the
// dataplanes it would select (the _resources/dataplanes shape); an invalid one gets the usual 400; writes still need the token.
import test from "ava";
import { isDryRun } from "../../extproc/control-plane/dry-run.js";
import { NO_SAMPLES } from "../../extproc/control-plane/dry-run-what-if.js";
import { allowedDecisionRecord, call, controlPlaneFor, dataplane, mtp } from "./helpers.js";

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

const pushSamples = async (cp: string, name: string, ids: string[]) =>
  (await call(cp, "POST", `/meshes/default/dataplanes/${name}/_decision-samples`, { records: ids.map(allowedDecisionRecord) })).status;
const ids = (n: number) => Array.from({ length: n }, (_, i) => `r${i}`);

test("dry run › given ?dryRun alone or =true, then it is a dry run; any other value, or none, is not", (t) => {
  const at = (query: string) => ({ url: new URL(`http://cp/meshes/default/meshservices/web${query}`) });
  t.true(isDryRun(at("?dryRun")));
  t.true(isDryRun(at("?dryRun=")));
  t.true(isDryRun(at("?dryRun=true")));
  for (const query of ["", "?dryRun=false", "?dryRun=1", "?dryRun=TRUE", "?dryrun=true"]) t.false(isDryRun(at(query)), query);
});

test("dry run › given ?dryRun=false, when a policy is PUT, then it is stored as usual", async (t) => {
  const { cp } = await controlPlaneFor(t);
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p?dryRun=false", mtp("p"))).status, 201);
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions/p")).status, 200);
});

test("dry run › given a resource that is no policy, when PUT as a dry run, then only dryRun, created and the resource are answered", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const web = { type: "MeshService", mesh: "default", name: "web", spec: { ports: [{ port: 80 }] } };
  const first = await call(cp.url, "PUT", "/meshes/default/meshservices/web?dryRun", web);
  t.is(first.status, 200);
  t.deepEqual(Object.keys(first.body).sort(), ["created", "dryRun", "resource"]);
  t.like(first.body, { dryRun: true, created: true, resource: web });
  t.is((await call(cp.url, "GET", "/meshes/default/meshservices/web")).status, 404);
  // over a stored one it would update
  t.is((await call(cp.url, "PUT", "/meshes/default/meshservices/web", web)).status, 201);
  t.like((await call(cp.url, "PUT", "/meshes/default/meshservices/web?dryRun=true", web)).body, { dryRun: true, created: false });
});

test("dry run › given a policy, when PUT as a dry run, then its warnings are those the real PUT answers", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const deprecated = onBackend("p");
  const dry = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p?dryRun=true", deprecated);
  const real = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", deprecated);
  t.is(real.status, 201);
  t.true(real.body.warnings.length > 0);
  t.deepEqual(dry.body.warnings, real.body.warnings);
  // and a policy without deprecations has none
  const rules = { ...mtp("q"), spec: { targetRef: { kind: "Mesh" }, rules: [{ default: { allow: [{ spiffeID: { type: "Prefix", value: "spiffe://default/ns/shop" } }] } }] } };
  t.deepEqual((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/q?dryRun=true", rules)).body.warnings, []);
});

test("dry run › given ?examples outside 0-1000 or not an integer, when a policy is PUT as a dry run, then 400 naming examples", async (t) => {
  const { cp } = await controlPlaneFor(t);
  for (const examples of ["-1", "1001", "1.5", "lots"]) {
    const reply = await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/p?dryRun=true&examples=${examples}`, mtp("p"));
    t.is(reply.status, 400, examples);
    t.is(reply.body.detail, "invalid query");
    t.deepEqual(reply.body.invalid_parameters, [{ field: "examples", reason: "must be an integer from 0 to 1000" }], examples);
  }
  for (const examples of ["0", "1000"]) t.is((await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/p?dryRun=true&examples=${examples}`, mtp("p"))).status, 200, examples);
});

test("dry run › given a stored policy and a candidate selecting other dataplanes, then the what-if covers both sets, by name, saying who selects each", async (t) => {
  const { cp } = await controlPlaneFor(t);
  for (const [name, service] of [["web-1", "web"], ["backend-1", "backend"], ["other-1", "other"]] as const) t.is((await call(cp.url, "PUT", `/meshes/default/dataplanes/${name}`, dataplane(name, service))).status, 201);
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", onBackend("p", "Allow"))).status, 201);
  const onWeb = { ...mtp("p", "Deny"), spec: { targetRef: { kind: "MeshService", name: "web" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Deny" } }] } };
  const reply = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p?dryRun=true", onWeb);
  t.is(reply.status, 200);
  t.deepEqual(reply.body.dataplanes.items.map((d: { name: string }) => d.name), ["web-1"]);
  t.deepEqual(reply.body.whatIf, {
    dataplanes: [
      { mesh: "default", name: "backend-1", selectedBy: ["stored"], samples: 0, summary: NO_SAMPLES },
      { mesh: "default", name: "web-1", selectedBy: ["candidate"], samples: 0, summary: NO_SAMPLES },
    ],
  });
  // a new policy replaces nothing: only what it selects
  const fresh = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/fresh?dryRun=true", { ...onWeb, name: "fresh" });
  t.deepEqual(fresh.body.whatIf.dataplanes.map((d: { name: string; selectedBy: string[] }) => [d.name, d.selectedBy]), [["web-1", ["candidate"]]]);
  // a candidate selecting nothing has an empty what-if
  const none = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/none?dryRun=true", { ...onWeb, name: "none", spec: { ...onWeb.spec, targetRef: { kind: "MeshService", name: "nobody" } } });
  t.deepEqual(none.body.whatIf, { dataplanes: [] });
});

test("dry run › given pushed decision samples, when a deny is PUT as a dry run, then the what-if replays them with the candidate in place", async (t) => {
  const { cp } = await controlPlaneFor(t);
  for (const name of ["backend-1", "backend-2"]) t.is((await call(cp.url, "PUT", `/meshes/default/dataplanes/${name}`, dataplane(name, "backend"))).status, 201);
  t.is(await pushSamples(cp.url, "backend-1", ids(3)), 200);
  const reply = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/deny-all?dryRun=true", mtp("deny-all", "Deny"));
  t.is(reply.status, 200);
  const [one, two] = reply.body.whatIf.dataplanes;
  t.like(one, { mesh: "default", name: "backend-1", selectedBy: ["candidate"], samples: 3, summary: "3 of 3 replayed decision(s) would change (allow→deny 3)" });
  t.deepEqual(Object.keys(one.report).sort(), ["approximate", "changed", "classes", "examples", "malformed", "records", "replayed", "unchanged", "unreplayable"]);
  t.like(one.report, { records: 3, replayed: 3, unchanged: 0, changed: 3, malformed: 0, approximate: 0, classes: { "allow→deny": 3 }, unreplayable: {} });
  t.deepEqual(one.report.examples.map((e: { requestId: string; line: number }) => [e.requestId, e.line]), [["r0", 1], ["r1", 2], ["r2", 3]], "each example names its record's place among the held ones, from 1");
  t.deepEqual(two, { mesh: "default", name: "backend-2", selectedBy: ["candidate"], samples: 0, summary: NO_SAMPLES });
});

test("dry run › given more changed decisions than examples, when ?examples is absent, 0 or N, then 20, none or N are shown in full", async (t) => {
  const { cp } = await controlPlaneFor(t);
  t.is((await call(cp.url, "PUT", "/meshes/default/dataplanes/backend-1", dataplane("backend-1", "backend"))).status, 201);
  t.is(await pushSamples(cp.url, "backend-1", ids(25)), 200);
  const examples = async (query: string) => {
    const reply = await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/deny-all?dryRun=true${query}`, mtp("deny-all", "Deny"));
    t.is(reply.body.whatIf.dataplanes[0].report.changed, 25);
    return reply.body.whatIf.dataplanes[0].report.examples.length;
  };
  t.is(await examples(""), 20);
  t.is(await examples("&examples=0"), 0);
  t.is(await examples("&examples=3"), 3);
  t.is(await examples("&examples=1000"), 25);
});

test("dry run › given a stored deny on backend, when a mesh-wide allow of the same name is PUT as a dry run, then the replay has the candidate in its place", async (t) => {
  const { cp } = await controlPlaneFor(t);
  t.is((await call(cp.url, "PUT", "/meshes/default/dataplanes/backend-1", dataplane("backend-1", "backend"))).status, 201);
  t.is(await pushSamples(cp.url, "backend-1", ids(2)), 200);
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", onBackend("p", "Deny"))).status, 201);
  const reply = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p?dryRun=true", mtp("p", "Allow"));
  t.like(reply.body.whatIf.dataplanes[0], { name: "backend-1", selectedBy: ["candidate", "stored"], samples: 2, report: { classes: { "allow (other deciding policy)": 2 } } });
  // (the records were allowed by backend-allow-web, which the mesh no longer has: still allowed, now by p; the stored deny is gone)
});
