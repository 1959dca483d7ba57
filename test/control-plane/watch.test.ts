// ETag and long-poll on list endpoints of the embedded control plane.
import test from "ava";
import { call, mtp, startTestControlPlane, tempDir } from "./helpers.js";

test("watch › lists carry an ETag; If-None-Match with the same tag answers 304", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/a", mtp("a"));
  const first = await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions");
  const etag = first.headers.get("etag");
  t.truthy(etag);
  const again = await fetch(cp.url + "/meshes/default/meshtrafficpermissions", { headers: { "if-none-match": etag! } });
  t.is(again.status, 304);
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/b", mtp("b"));
  const changed = await fetch(cp.url + "/meshes/default/meshtrafficpermissions", { headers: { "if-none-match": etag! } });
  t.is(changed.status, 200);
  t.not(changed.headers.get("etag"), etag);
});

test("watch › ?wait holds the request until a change, then answers 200 with the new list", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const first = await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions");
  const started = Date.now();
  const held = fetch(cp.url + "/meshes/default/meshtrafficpermissions?wait=20s", { headers: { "if-none-match": first.headers.get("etag")! } });
  setTimeout(() => void call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/new", mtp("new")), 300);
  const res = await held;
  const elapsedMs = Date.now() - started;
  t.is(res.status, 200);
  t.is(((await res.json()) as { total: number }).total, 1);
  t.true(elapsedMs >= 250, `answered after ${elapsedMs}ms, before the change`);
  t.true(elapsedMs < 5000, `answered after ${elapsedMs}ms`);
});

test("watch › a change in another kind or mesh does not release the wait; the wait ends with 304", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const first = await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions");
  const held = fetch(cp.url + "/meshes/default/meshtrafficpermissions?wait=800ms", { headers: { "if-none-match": first.headers.get("etag")! } });
  await call(cp.url, "PUT", "/meshes/other/meshtrafficpermissions/x", mtp("x", "Allow", "other"));
  const res = await held;
  t.is(res.status, 304);
  t.is(res.headers.get("etag"), first.headers.get("etag"));
});

test("watch › stopping the control plane releases held long-polls promptly", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(() => dir.remove());
  const first = await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions");
  const held = fetch(cp.url + "/meshes/default/meshtrafficpermissions?wait=60s", { headers: { "if-none-match": first.headers.get("etag")! } }).then(
    (r) => r.status,
    () => "closed",
  );
  await new Promise((r) => setTimeout(r, 100));
  const started = Date.now();
  await cp.stop();
  t.true(Date.now() - started < 3000);
  t.true(["closed", 304].includes(await held));
});
