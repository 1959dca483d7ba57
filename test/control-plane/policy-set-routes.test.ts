// GET /meshes/{mesh}/dataplanes/{name}/_policy-set's answers (control-plane/policy-set-routes.ts): Kuma-style 404
// bodies, the `wait` check, 304 on the ETag held, and when an answer may be only the change (one ETag, exactly the one replaced).
import test from "ava";
import { DELTA_BASE_HEADER, DELTA_REQUEST_HEADER } from "../../extproc/kuma-rest/features.js";
import { call, controlPlaneFor, dataplane, mtp } from "./helpers.js";

const SET = "/meshes/default/dataplanes/a/_policy-set";

test("policy set › given an unknown mesh or dataplane, when its set is read, then 404 with Kuma's titles and `Not found`", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", "/meshes/default/dataplanes/a", dataplane("a"));
  const noMesh = await call(cp.url, "GET", "/meshes/nomesh/dataplanes/a/_policy-set");
  t.is(noMesh.status, 404);
  t.like(noMesh.body, { title: "Failed to retrieve Mesh", detail: "Not found" });
  const noDataplane = await call(cp.url, "GET", "/meshes/default/dataplanes/nobody/_policy-set");
  t.is(noDataplane.status, 404);
  t.like(noDataplane.body, { title: "Could not retrieve Dataplane", detail: "Not found" });
});

test("policy set › given a malformed wait, when the set is read, then 400 names the wait parameter", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", "/meshes/default/dataplanes/a", dataplane("a"));
  const bad = await call(cp.url, "GET", `${SET}?wait=soon`);
  t.is(bad.status, 400);
  t.regex(bad.body.detail, /wait/);
});

test("policy set › given the ETag of the current set, when asked again, then 304 carrying that ETag and no body", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", "/meshes/default/dataplanes/a", dataplane("a"));
  const etag = (await call(cp.url, "GET", SET)).headers.get("etag")!;
  for (const held of [etag, `W/${etag}`, `"other", ${etag}`]) {
    const again = await call(cp.url, "GET", SET, undefined, { "if-none-match": held, [DELTA_REQUEST_HEADER]: "1" });
    t.is(again.status, 304, held);
    t.is(again.headers.get("etag"), etag);
    t.is(again.body, undefined);
  }
});

test("policy set › given a set replaced by a change, when the change alone is asked for, then only a client holding exactly the replaced ETag gets it", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", "/meshes/default/dataplanes/a", dataplane("a"));
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", mtp("p"));
  const held = (await call(cp.url, "GET", SET)).headers.get("etag")!;
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", mtp("p", "Deny"));
  const full = await call(cp.url, "GET", SET);
  t.not(full.headers.get("etag"), held);
  const delta = await call(cp.url, "GET", SET, undefined, { "if-none-match": held, [DELTA_REQUEST_HEADER]: "" });
  t.is(delta.status, 200);
  t.is(delta.headers.get(DELTA_BASE_HEADER), held, "any value of the request header asks for the change");
  t.is(delta.headers.get("etag"), full.headers.get("etag"));
  // two ETags held, or none, or no request header: the set in full
  for (const headers of [{ "if-none-match": `${held}, "x"`, [DELTA_REQUEST_HEADER]: "1" }, { [DELTA_REQUEST_HEADER]: "1" }, { "if-none-match": held }] as Array<Record<string, string>>) {
    const answer = await call(cp.url, "GET", SET, undefined, headers);
    t.is(answer.status, 200, JSON.stringify(headers));
    t.is(answer.headers.get(DELTA_BASE_HEADER), null, JSON.stringify(headers));
    t.is(answer.headers.get("etag"), full.headers.get("etag"));
    t.deepEqual(answer.body, full.body, JSON.stringify(headers));
  }
});
