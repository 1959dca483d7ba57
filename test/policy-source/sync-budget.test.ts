// One memory budget per sync: the kinds are listed in parallel, so the byte limit holds for all of them
// together (not per kind), a `next` chain that never cycles stops at a bounded number of pages (all lists together;
// the whole source against such a chain: sync-budget-pages.test.ts), and one
// item nested 100 000 deep is rejected while the rest apply.
import test from "ava";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { KumaClient, MAX_PAGES_PER_SYNC, SyncError, syncBudget, type SyncBudget } from "../../extproc/policy-source/kuma-client.js";
import { FETCHED_TYPES } from "../../extproc/policy-source/resource-set.js";
import { sourceFor } from "./harness.js";
import { serveJson } from "./fixtures.js";

test("sync budget › given every kind's list at 60 % of the byte limit, when the source syncs, then the sync fails on the limit (the budget is per sync, not per kind)", async (t) => {
  const limit = 64 * 1024;
  const item = (i: number) => ({ type: "MeshTrafficPermission", mesh: "default", name: `p${i}`, labels: { pad: "x".repeat(1000) } });
  const cp = await serveJson(t, () => ({ total: 38, items: Array.from({ length: 38 }, (_, i) => item(i)), next: null }));
  const { source } = sourceFor(cp.url, { maxListBytes: limit });
  t.teardown(() => source.stop());
  await source.start();
  t.is(source.status.lastError?.reason, "bad_response");
  t.regex(source.status.lastError?.message ?? "", /larger than 65536 bytes/);
});

test("sync budget › given a `next` chain that never cycles (offset+1), when two lists read under one page budget, then they stop together once it is spent", async (t) => {
  const cp = await serveJson(t, (url) => {
    const offset = Number(url.searchParams.get("offset") ?? 0);
    return { total: 1e9, items: [], next: `${url.origin}${url.pathname}?offset=${offset + 1}` };
  });
  const client = new KumaClient({ baseUrl: cp.url, mesh: "default", maxListBytes: 1 << 20 });
  const budget: SyncBudget = { ...syncBudget(1 << 20), pagesLeft: 7 };
  const [first, second] = [FETCHED_TYPES[0]!, FETCHED_TYPES[1]!];
  const err = await t.throwsAsync(client.listAll(first, undefined, false, budget), { instanceOf: SyncError });
  t.is(err!.reason, "bad_response");
  t.is(err!.message, `/meshes/default/${first.plural}: the sync read more than ${MAX_PAGES_PER_SYNC} pages (all lists together)`);
  t.is(cp.requests(), 7, "the whole budget, one request a page");
  // the next list of the same sync has nothing left: it fails before asking
  await t.throwsAsync(client.listAll(second, undefined, false, budget), { instanceOf: SyncError, message: /more than \d+ pages/ });
  t.is(cp.requests(), 7);
  t.deepEqual(syncBudget(4096), { left: 4096, limit: 4096, pagesLeft: MAX_PAGES_PER_SYNC });
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
