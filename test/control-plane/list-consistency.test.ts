// list consistency › what the control plane's lists show follows what the store holds on disk: the list of
// every mesh (/meshtrafficpermissions, Kuma's cross-mesh list) after writes, with ETags and ?wait long-polls;
// and a write that fails on disk changes nothing a reader sees (no list, get, ETag or long-poll moves).
import test from "ava";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { mountTmpfs } from "../helpers/tmpfs.js";
import { call, dataplane, mtp, startTestControlPlane, tempDir } from "./helpers.js";

type Item = { mesh: string; name: string; spec: { from: Array<{ default: { action: string } }> } };
const keys = (body: { items: Item[] }) => body.items.map((i) => `${i.mesh}/${i.name}`);

async function controlPlane(t: import("ava").ExecutionContext, dataDir?: string) {
  const dir = dataDir ? undefined : await tempDir();
  const cp = await startTestControlPlane(dataDir ?? dir!.path);
  t.teardown(async () => {
    await cp.stop();
    await dir?.remove();
  });
  return cp;
}

test("list consistency › the all-meshes list is read, written, read again and long-polled like a mesh's list", async (t) => {
  const cp = await controlPlane(t);
  // given an empty store: the all-meshes list is empty and carries an ETag
  const empty = await call(cp.url, "GET", "/meshtrafficpermissions");
  t.is(empty.status, 200);
  t.deepEqual(keys(empty.body), []);
  const etag0 = empty.headers.get("etag")!;
  t.truthy(etag0);
  // when a long-poll on it is held and a policy is written in mesh `other`
  const held = fetch(`${cp.url}/meshtrafficpermissions?wait=20s`, { headers: { "if-none-match": etag0 } });
  t.is((await call(cp.url, "PUT", "/meshes/other/meshtrafficpermissions/b", mtp("b", "Allow", "other"))).status, 201);
  // then the long-poll answers 200 with the new item
  const released = await held;
  t.is(released.status, 200);
  t.deepEqual(keys((await released.json()) as { items: Item[] }), ["other/b"]);
  // and a read sees it too, with a new ETag
  const one = await call(cp.url, "GET", "/meshtrafficpermissions");
  t.deepEqual(keys(one.body), ["other/b"]);
  const etag1 = one.headers.get("etag")!;
  t.not(etag1, etag0);
  // when a second mesh gets a policy; then the list holds both, sorted by mesh then name, and the ETag moves
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/a", mtp("a"))).status, 201);
  const two = await call(cp.url, "GET", "/meshtrafficpermissions");
  t.deepEqual(keys(two.body), ["default/a", "other/b"]);
  t.is(two.body.total, 2);
  const etag2 = two.headers.get("etag")!;
  t.not(etag2, etag1);
  t.is((await fetch(`${cp.url}/meshtrafficpermissions`, { headers: { "if-none-match": etag2 } })).status, 304);
  // when an update and a delete come while a long-poll with the latest ETag is held
  const held2 = fetch(`${cp.url}/meshtrafficpermissions?wait=20s`, { headers: { "if-none-match": etag2 } });
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/a", mtp("a", "Deny"))).status, 200);
  const updated = (await (await held2).json()) as { items: Item[] };
  // then it answers with the updated version
  t.deepEqual(updated.items.map((i) => `${i.mesh}/${i.name}:${i.spec.from[0]!.default.action}`), ["default/a:Deny", "other/b:Allow"]);
  t.is((await call(cp.url, "DELETE", "/meshes/other/meshtrafficpermissions/b")).status, 200);
  const after = await call(cp.url, "GET", "/meshtrafficpermissions");
  t.deepEqual(keys(after.body), ["default/a"]);
  // and a change to another kind does not release a long-poll on this list (it ends with 304)
  const etag3 = after.headers.get("etag")!;
  const held3 = fetch(`${cp.url}/meshtrafficpermissions?wait=800ms`, { headers: { "if-none-match": etag3 } });
  t.is((await call(cp.url, "PUT", "/meshes/default/dataplanes/dp-1", dataplane("dp-1"))).status, 201);
  t.is((await held3).status, 304);
});

test("list consistency › a create whose file cannot be written is not listed, got or announced", async (t) => {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  const cp = await controlPlane(t, dir.path);
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/ok", mtp("ok"))).status, 201);
  const before = await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions");
  // given a directory where the new resource's file would go (its rename fails)
  await mkdir(join(dir.path, "meshes", "default", "meshtrafficpermissions", "blocked.yaml"));
  const held = fetch(`${cp.url}/meshes/default/meshtrafficpermissions?wait=1s`, { headers: { "if-none-match": before.headers.get("etag")! } });
  // when it is written
  const put = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/blocked", mtp("blocked", "Deny"));
  // then the write is refused with a server error
  t.true(put.status >= 500, `status ${put.status}`);
  // and no reader sees it: not got, not in the mesh's list nor the all-meshes list, the ETag unchanged
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions/blocked")).status, 404);
  const list = await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions");
  t.deepEqual(keys(list.body), ["default/ok"]);
  t.is(list.headers.get("etag"), before.headers.get("etag"));
  t.deepEqual(keys((await call(cp.url, "GET", "/meshtrafficpermissions")).body), ["default/ok"]);
  // and a held long-poll is not released by it
  t.is((await held).status, 304);
});

test("list consistency › an update that does not fit on the disk leaves the old version everywhere, also after a restart", async (t) => {
  const dir = mountTmpfs(t, 128);
  if (!dir) {
    t.pass("skipped: no tmpfs (printed above)");
    return;
  }
  const cp = await startTestControlPlane(dir);
  let stopped = false;
  t.teardown(async () => {
    if (!stopped) await cp.stop();
  });
  // given a small stored policy
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", mtp("p", "Deny"))).status, 201);
  const before = await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions");
  // when its new version is larger than the whole disk
  const big = { ...mtp("p", "Allow"), labels: { note: "x".repeat(200_000) } };
  const put = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", big);
  // then it is refused (507: the disk is full)
  t.is(put.status, 507, JSON.stringify(put.body));
  // and every read still shows the version on disk, the Deny, with the same ETag
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions/p")).body.spec.from[0].default.action, "Deny");
  const list = await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions");
  t.is(list.headers.get("etag"), before.headers.get("etag"));
  t.is((await call(cp.url, "GET", "/meshtrafficpermissions")).body.items[0].spec.from[0].default.action, "Deny");
  // and a restart reading the disk shows the same
  await cp.stop();
  stopped = true;
  const again = await startTestControlPlane(dir);
  t.teardown(() => again.stop());
  t.is((await call(again.url, "GET", "/meshes/default/meshtrafficpermissions/p")).body.spec.from[0].default.action, "Deny");
});
