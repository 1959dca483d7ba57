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
  // (200 under a new tag: a wait that ran out would answer 304, so A was woken by the edit)
  t.is(a.status, 200);
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

test("policy set › given a sidecar holding its set, when one policy changes, then asking for the change alone brings that policy in full and the others by key, relative to the set held", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", "/meshes/default/dataplanes/a", dataplane("a", "svc-a"));
  for (const p of [onService("on-a", "svc-a"), meshWide]) await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/${p.name}`, p);
  await call(cp.url, "PUT", "/meshes/default", { type: "Mesh", name: "default" });
  const first = await call(cp.url, "GET", "/meshes/default/dataplanes/a/_policy-set");
  const held = first.headers.get("etag")!;
  const path = "/meshes/default/dataplanes/a/_policy-set";
  // when on-a is edited while the sidecar long-polls on the set it holds, asking for the change alone
  const polled = fetch(`${cp.url}${path}?wait=5s`, { headers: { "if-none-match": held, "x-meshext-policy-set-delta": "1" } });
  await sleep(100);
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/on-a", onService("on-a", "svc-a", "Allow"));
  const delta = await polled;
  // then the answer is relative to the set held: on-a in full, the policy and the Mesh left as they were by key
  t.is(delta.status, 200);
  t.is(delta.headers.get("x-meshext-policy-set-base"), held);
  const body = (await delta.json()) as { dataplane: { name: string }; total: number; items: unknown[] };
  const full = await call(cp.url, "GET", path);
  t.is(delta.headers.get("etag"), full.headers.get("etag"));
  t.is(body.dataplane.name, "a");
  t.is(body.total, full.body.total);
  const fullItems = full.body.items as Array<{ type: string; name: string }>;
  t.deepEqual(
    body.items,
    fullItems.map((i) => (i.name === "on-a" ? i : `${i.type}/${i.name}`)),
  );
  // and without the header, or from a set it does not hold, a sidecar gets the set in full
  for (const headers of [{ "if-none-match": held }, { "if-none-match": '"elsewhere"', "x-meshext-policy-set-delta": "1" }] as Array<Record<string, string>>) {
    const answer = await call(cp.url, "GET", path, undefined, headers);
    t.is(answer.status, 200);
    t.is(answer.headers.get("x-meshext-policy-set-base"), null);
    t.deepEqual(answer.body.items, full.body.items);
  }
});

test("policy set › given a sidecar holding its set, when a route change selects every set again, then the next set is still offered relative to the one held", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", "/meshes/default/dataplanes/a", dataplane("a", "svc-a"));
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/on-a", onService("on-a", "svc-a"));
  const path = "/meshes/default/dataplanes/a/_policy-set";
  const held = (await call(cp.url, "GET", path)).headers.get("etag")!;
  // when a MeshHTTPRoute of this service is stored (every set of the mesh is selected again)
  const route = { type: "MeshHTTPRoute", mesh: "default", name: "r", spec: { targetRef: { kind: "MeshService", name: "svc-a" }, to: [{ targetRef: { kind: "MeshService", name: "svc-b" }, rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], default: {} }] }] } };
  t.is((await call(cp.url, "PUT", "/meshes/default/meshhttproutes/r", route)).status, 201);
  const answer = await call(cp.url, "GET", path, undefined, { "if-none-match": held, "x-meshext-policy-set-delta": "1" });
  // then the answer is relative to the set held: on-a by key, the route in full
  t.is(answer.status, 200);
  t.is(answer.headers.get("x-meshext-policy-set-base"), held);
  t.true((answer.body.items as unknown[]).includes("MeshTrafficPermission/on-a"));
  t.true((answer.body.items as Array<{ name?: string }>).some((i) => typeof i === "object" && i.name === "r"));
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
