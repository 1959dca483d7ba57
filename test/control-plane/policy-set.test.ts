// The per-dataplane policy set (GET /meshes/{mesh}/dataplanes/{name}/_policy-set) through the real control
// plane: what selects the Dataplane plus the resources, an ETag that moves only with that set, long-polls that
// wake only the Dataplanes a write reaches; and list pages serialised once for every waiter.
import test from "ava";
import { call, controlPlaneFor, dataplane, sleep } from "./helpers.js";

const onService = (name: string, service: string, action: "Allow" | "Deny" = "Deny") => ({
  type: "MeshTrafficPermission",
  mesh: "default",
  name,
  spec: { targetRef: { kind: "MeshService", name: service }, from: [{ targetRef: { kind: "Mesh" }, default: { action } }] },
});

const meshWide = { type: "MeshTrafficPermission", mesh: "default", name: "mesh-wide", spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "MeshService", name: "ops" }, default: { action: "Allow" } }] } };

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(" ")[1]) : NaN;
}

const names = (body: { items: Array<{ type: string; name: string }> }) => body.items.map((i) => `${i.type}/${i.name}`).sort();

test("policy set › serves what selects the Dataplane and the Mesh; the root lists the feature", async (t) => {
  const { cp } = await controlPlaneFor(t);
  t.is((await call(cp.url, "PUT", "/meshes/default/dataplanes/a", dataplane("a", "svc-a"))).status, 201);
  for (const p of [onService("on-a", "svc-a"), onService("on-b", "svc-b"), meshWide]) await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/${p.name}`, p);
  await call(cp.url, "PUT", "/meshes/default", { type: "Mesh", name: "default" });
  // when dataplane a asks for its set
  const set = await call(cp.url, "GET", "/meshes/default/dataplanes/a/_policy-set");
  // then it holds the policies selecting a, the Mesh, and the Dataplane it was selected for; with an ETag
  t.is(set.status, 200);
  t.deepEqual(names(set.body), ["Mesh/default", "MeshTrafficPermission/mesh-wide", "MeshTrafficPermission/on-a"]);
  t.is(set.body.dataplane.name, "a");
  t.is(set.body.total, 3);
  t.truthy(set.headers.get("etag"));
  t.true(((await call(cp.url, "GET", "/")).body.features as string[]).includes("dataplane-policy-set"));
  // and an unregistered dataplane or mesh is a Kuma-style 404
  t.is((await call(cp.url, "GET", "/meshes/default/dataplanes/nobody/_policy-set")).status, 404);
  t.is((await call(cp.url, "GET", "/meshes/nomesh/dataplanes/a/_policy-set")).status, 404);
});

test("policy set › an edit to a policy selecting A wakes A's long-poll, not B's, and B's ETag stays", async (t) => {
  const { cp } = await controlPlaneFor(t);
  for (const [dp, svc] of [["a", "svc-a"], ["b", "svc-b"]]) await call(cp.url, "PUT", `/meshes/default/dataplanes/${dp}`, dataplane(dp!, svc));
  for (const p of [onService("on-a", "svc-a"), onService("on-b", "svc-b"), meshWide]) await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/${p.name}`, p);
  const etagA = (await call(cp.url, "GET", "/meshes/default/dataplanes/a/_policy-set")).headers.get("etag")!;
  const etagB = (await call(cp.url, "GET", "/meshes/default/dataplanes/b/_policy-set")).headers.get("etag")!;
  const rendersBefore = await metric(cp.url, "meshext_control_plane_policy_set_renders_total");
  // given both dataplanes long-polling their sets
  const started = Date.now();
  const heldA = fetch(`${cp.url}/meshes/default/dataplanes/a/_policy-set?wait=1500ms`, { headers: { "if-none-match": etagA } });
  const heldB = fetch(`${cp.url}/meshes/default/dataplanes/b/_policy-set?wait=1500ms`, { headers: { "if-none-match": etagB } });
  await sleep(150);
  t.is(await metric(cp.url, "meshext_control_plane_policy_set_waiters"), 2);
  // when the policy selecting A is edited (Deny → Allow), and one selecting neither is created
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/on-a", onService("on-a", "svc-a", "Allow"))).status, 200);
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/on-c", onService("on-c", "svc-c"))).status, 201);
  // then A's long-poll answers at once with the new version of on-a
  const a = await heldA;
  t.is(a.status, 200);
  t.true(Date.now() - started < 1400, `A answered after ${Date.now() - started}ms`);
  t.not(a.headers.get("etag"), etagA);
  const body = (await a.json()) as { items: Array<{ name: string; spec: { from: Array<{ default: { action: string } }> } }> };
  t.is(body.items.find((i) => i.name === "on-a")!.spec.from[0]!.default.action, "Allow");
  // and B's is not woken: it ends with 304 when its wait is over, and its ETag is unchanged
  const b = await heldB;
  t.is(b.status, 304);
  t.true(Date.now() - started >= 1400, `B answered after ${Date.now() - started}ms`);
  t.is((await call(cp.url, "GET", "/meshes/default/dataplanes/b/_policy-set")).headers.get("etag"), etagB);
  // and only A's set was selected again (B's and the unrelated write cost no selection)
  t.is((await metric(cp.url, "meshext_control_plane_policy_set_renders_total")) - rendersBefore, 1);
});

test("policy set › a Mesh change reaches every set; re-registering a Dataplane with other tags re-selects it", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", "/meshes/default/dataplanes/a", dataplane("a", "svc-a"));
  for (const p of [onService("on-a", "svc-a"), onService("on-b", "svc-b")]) await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/${p.name}`, p);
  const first = await call(cp.url, "GET", "/meshes/default/dataplanes/a/_policy-set");
  // when the Mesh is stored, the set carries it under a new ETag
  const held = fetch(`${cp.url}/meshes/default/dataplanes/a/_policy-set?wait=5s`, { headers: { "if-none-match": first.headers.get("etag")! } });
  await sleep(100);
  await call(cp.url, "PUT", "/meshes/default", { type: "Mesh", name: "default", mtls: { enabledBackend: "ca-1", backends: [{ name: "ca-1", type: "builtin" }] } });
  const woken = await held;
  t.is(woken.status, 200);
  t.true(names((await woken.json()) as never).includes("Mesh/default"));
  // when a is registered again as svc-b, its set follows: on-b instead of on-a
  await call(cp.url, "PUT", "/meshes/default/dataplanes/a", dataplane("a", "svc-b"));
  t.deepEqual(names((await call(cp.url, "GET", "/meshes/default/dataplanes/a/_policy-set")).body), ["Mesh/default", "MeshTrafficPermission/on-b"]);
});

test("list pages › one write renders each page once for every waiter, and every waiter gets the same right body", async (t) => {
  const { cp } = await controlPlaneFor(t);
  for (let i = 0; i < 30; i++) await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/p-${i}`, onService(`p-${i}`, `svc-${i}`));
  const etag = (await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions?size=10")).headers.get("etag")!;
  // given 200 waiters on the first page and 200 on the second
  const held = Array.from({ length: 400 }, (_, i) =>
    fetch(`${cp.url}/meshes/default/meshtrafficpermissions?size=10&offset=${i % 2 === 0 ? 0 : 10}&wait=10s`, { headers: { "if-none-match": etag } }),
  );
  await sleep(300);
  const before = await metric(cp.url, "meshext_control_plane_list_page_renders_total");
  // when one policy is edited
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p-0", onService("p-0", "svc-0", "Allow"));
  const replies = await Promise.all(held.map(async (r) => ({ status: (await r).status, text: await (await r).text() })));
  // then every waiter gets 200 with its page as a plain GET now reads it
  const page0 = await (await fetch(`${cp.url}/meshes/default/meshtrafficpermissions?size=10&offset=0`)).text();
  const page1 = await (await fetch(`${cp.url}/meshes/default/meshtrafficpermissions?size=10&offset=10`)).text();
  t.true(replies.every((r, i) => r.status === 200 && r.text === (i % 2 === 0 ? page0 : page1)));
  t.is(JSON.parse(page0).items.find((p: { name: string }) => p.name === "p-0").spec.from[0].default.action, "Allow");
  // and each of the two pages of the new version was serialised once (the two GETs above reused them)
  t.is((await metric(cp.url, "meshext_control_plane_list_page_renders_total")) - before, 2);
});
