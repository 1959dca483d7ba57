// A source following a `next` chain that never cycles stops after a bounded number of pages (it reads them all: seconds; the page budget itself, in process: sync-budget.test.ts).
import test from "ava";
import { MAX_PAGES_PER_SYNC } from "../../extproc/policy-source/kuma-client.js";
import { sourceFor } from "./harness.js";
import { serveJson } from "./fixtures.js";

test("sync budget › given a `next` chain that never cycles (offset+1), when the source syncs, then it stops after a bounded number of pages", async (t) => {
  const cp = await serveJson(t, (url) => {
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
