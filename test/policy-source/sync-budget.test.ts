// One memory budget per sync: the kinds are listed in parallel, so the byte limit holds for all of them
// together (not per kind), a `next` chain that never cycles stops at a bounded number of pages, and one
// item nested 100 000 deep is rejected while the rest apply.
import test from "ava";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { MAX_PAGES_PER_SYNC } from "../../extproc/policy-source/kuma-client.js";
import { sourceFor } from "./harness.js";

async function serve(t: import("ava").ExecutionContext, body: (url: URL) => unknown) {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body(url)));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
}

test("sync budget › given every kind's list at 60 % of the byte limit, when the source syncs, then the sync fails on the limit (the budget is per sync, not per kind)", async (t) => {
  const limit = 64 * 1024;
  const item = (i: number) => ({ type: "MeshTrafficPermission", mesh: "default", name: `p${i}`, labels: { pad: "x".repeat(1000) } });
  const cp = await serve(t, () => ({ total: 38, items: Array.from({ length: 38 }, (_, i) => item(i)), next: null }));
  const { source } = sourceFor(cp.url, { maxListBytes: limit });
  t.teardown(() => source.stop());
  await source.start();
  t.is(source.status.lastError?.reason, "bad_response");
  t.regex(source.status.lastError?.message ?? "", /larger than 65536 bytes/);
});

test("sync budget › given a `next` chain that never cycles (offset+1), when the source syncs, then it stops after a bounded number of pages", async (t) => {
  const cp = await serve(t, (url) => {
    const offset = Number(url.searchParams.get("offset") ?? 0);
    return { total: 1e9, items: [], next: `${url.origin}${url.pathname}?offset=${offset + 1}` };
  });
  const { source } = sourceFor(cp.url);
  t.teardown(() => source.stop());
  await source.start();
  t.is(source.status.lastError?.reason, "bad_response");
  t.regex(source.status.lastError?.message ?? "", /more than \d+ pages/);
  t.true(cp.requests() <= MAX_PAGES_PER_SYNC + 20, `${cp.requests()} requests`);
});

test("sync budget › given one item nested 100 000 deep among good ones, when the source syncs, then that item is rejected and the rest apply", async (t) => {
  const good = { type: "MeshTrafficPermission", mesh: "default", name: "allow", spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Allow" } }] } };
  const page = '{"total": 2, "next": null, "items": [' + JSON.stringify(good) + "," + '{"type":"MeshTrafficPermission","mesh":"default","name":"deep","spec":{"deep":' + "[".repeat(100_000) + '"x"' + "]".repeat(100_000) + "}}]}";
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    res.writeHead(200, { "content-type": "application/json" }).end(path.endsWith("/meshtrafficpermissions") ? page : '{"total":0,"items":[],"next":null}');
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const { source, names } = sourceFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  t.teardown(() => source.stop());
  await source.start();
  t.is(source.status.lastError, undefined, JSON.stringify(source.status.lastError));
  t.deepEqual(names(), ["allow"]);
  t.like(source.rejected[0], { kind: "MeshTrafficPermission", name: "deep" });
  t.regex(JSON.stringify(source.rejected[0]?.violations), /nests deeper than 64 levels/);
});
