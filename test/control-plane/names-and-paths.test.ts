// Resource names and URL paths at the edges: names too long for a file name, malformed percent-encoding.
import test from "ava";
import { call, mtp, startTestControlPlane, tempDir } from "./helpers.js";

test("names › a name of 231-253 characters is refused with 400 (it cannot be a file name), not a 500", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  for (const length of [231, 240, 253]) {
    const name = "a".repeat(length);
    const reply = await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/${name}`, mtp(name));
    t.is(reply.status, 400, `length ${length}`);
    t.regex(JSON.stringify(reply.body), /at most \d+ characters/);
  }
  const ok = "b".repeat(200);
  t.is((await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/${ok}`, mtp(ok))).status, 201);
  t.is((await call(cp.url, "GET", `/meshes/default/meshtrafficpermissions/${ok}`)).status, 200);
});

test("paths › malformed percent-encoding in a path is a 400 problem, not a 500", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  for (const path of ["/meshes/%E0%A4%A/meshtrafficpermissions", "/meshes/default/meshtrafficpermissions/%zz", "/%"]) {
    const reply = await call(cp.url, "GET", path);
    t.is(reply.status, 400, path);
    t.regex(reply.body.detail ?? reply.body.title, /percent-encoding/);
  }
});
