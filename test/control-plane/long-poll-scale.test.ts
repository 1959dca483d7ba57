// The control plane under many long-polls: a heartbeat that changes no watched state wakes nobody, a change
// wakes only the waiters of its collection, and each collection version is rendered once for all of them.
import test from "ava";
import { collectionKey, ChangeNotifier } from "../../extproc/control-plane/watch.js";
import { listReply } from "../../extproc/control-plane/paging.js";
import { call, dataplane, startTestControlPlane, tempDir } from "./helpers.js";

test("long-poll scale › a heartbeat that changes nothing does not answer a held Dataplane long-poll", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  t.is((await call(cp.url, "PUT", "/meshes/default/dataplanes/dp-1", dataplane("dp-1"))).status, 201);
  const first = await call(cp.url, "GET", "/meshes/default/dataplanes");
  // given a long-poll held on the Dataplane list
  const started = Date.now();
  const held = fetch(cp.url + "/meshes/default/dataplanes?wait=1500ms", { headers: { "if-none-match": first.headers.get("etag")! } });
  // when the dataplane heartbeats (still online: nothing watched changes)
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 150));
    t.is((await call(cp.url, "POST", "/meshes/default/dataplanes/dp-1/_heartbeat", {})).status, 200);
  }
  // then the long-poll is not released: it ends with 304 when its wait is over
  const res = await held;
  t.is(res.status, 304);
  t.true(Date.now() - started >= 1400, `answered after ${Date.now() - started}ms`);
  // and a heartbeat that does change the state (draining) does release one
  const etag = (await call(cp.url, "GET", "/meshes/default/dataplanes")).headers.get("etag")!;
  const held2 = fetch(cp.url + "/meshes/default/dataplanes?wait=10s", { headers: { "if-none-match": etag } });
  await new Promise((r) => setTimeout(r, 150));
  await call(cp.url, "POST", "/meshes/default/dataplanes/dp-1/_heartbeat", { state: "draining" });
  const released = await held2;
  t.is(released.status, 200);
  t.is(((await released.json()) as { items: Array<{ status: { state: string } }> }).items[0]!.status.state, "draining");
});

test("long-poll scale › one change renders its collection once for every waiter, and other collections not at all", async (t) => {
  const notifier = new ChangeNotifier();
  t.teardown(() => notifier.close());
  let items = [{ type: "MeshTrafficPermission", mesh: "default", name: "a" }];
  let renders = 0;
  const list = () => {
    renders++;
    return items;
  };
  const never = new Promise<void>(() => {});
  const request = (etag?: string) => ({
    url: new URL("http://cp/meshes/default/meshtrafficpermissions?wait=10s"),
    headers: etag ? { "if-none-match": etag } : {},
    abandoned: never,
  });
  const collection = { kind: "MeshTrafficPermission", mesh: "default" };
  const first = await listReply(request(), notifier, collection, list);
  const etag = first.headers!.etag!;
  // given 100 waiters on the collection
  const waiters = Array.from({ length: 100 }, () => listReply(request(etag), notifier, collection, list));
  await new Promise((r) => setTimeout(r, 50));
  renders = 0;
  // when another collection changes, nothing is rendered and nobody answers
  notifier.notify("MeshTrafficPermission", "other-mesh");
  notifier.notify("MeshRateLimit", "default");
  await new Promise((r) => setTimeout(r, 50));
  t.is(renders, 0);
  // when this collection changes, it is rendered once and all 100 answer 200 with the new ETag
  items = [...items, { type: "MeshTrafficPermission", mesh: "default", name: "b" }];
  notifier.notify("MeshTrafficPermission", "default");
  const replies = await Promise.all(waiters);
  t.true(replies.every((r) => r.status === 200 && r.headers!.etag !== etag));
  t.is(renders, 1);
  t.is(collectionKey("MeshTrafficPermission", "default"), "MeshTrafficPermission/default");
});
