// The sidecar's long-poll is paced: a control plane that answers every long-poll at once (304 with no wait,
// or a new ETag each time) gets ever fewer requests — backoff up to a few seconds — counted in
// meshext_control_plane_watch_paced_total, instead of a busy loop of thousands of requests a second.
import test from "ava";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { IMMEDIATE_ROUND_MS, MAX_CHANGED_PACE_MS, MAX_WATCH_PACE_MS, WatchPace } from "../../extproc/policy-source/watch-pace.js";
import { sourceFor } from "./harness.js";

/** A server offering ETags that answers each If-None-Match at once: 304, or 200 with a new ETag (`churn`). */
async function impatientServer(churn: boolean) {
  let requests = 0;
  let version = 0;
  const server = createServer((req, res) => {
    requests++;
    const etag = churn ? `"v${++version}"` : '"v1"';
    if (!churn && req.headers["if-none-match"] === etag) return void res.writeHead(304, { etag }).end();
    res.writeHead(200, { "content-type": "application/json", etag }).end(JSON.stringify({ total: 0, items: [], next: null }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

for (const churn of [false, true]) {
  test(`paced long-poll › given a control plane answering every long-poll at once (${churn ? "a new ETag each time" : "304 at once"}), when the source follows it for 1 s, then it sends a few dozen requests, not thousands, and counts the paced rounds`, async (t) => {
    const cp = await impatientServer(churn);
    const { source, metric } = sourceFor(cp.url, { pollIntervalMs: 60_000 });
    t.teardown(async () => {
      await source.stop();
      await cp.close();
    });
    await source.start();
    t.is(source.status.mode, "long-poll");
    // The pacing shows in its counter (waited for, not timed: on a loaded machine rounds take longer to get there)
    const pacedBy = Date.now() + 20_000;
    while ((await metric("meshext_control_plane_watch_paced_total")) < 3 && Date.now() < pacedBy) await new Promise((r) => setTimeout(r, 50));
    t.true((await metric("meshext_control_plane_watch_paced_total")) >= 3);
    const windowMs = 1000;
    const before = cp.requests();
    await new Promise((r) => setTimeout(r, windowMs));
    const sent = cp.requests() - before;
    // 9 lists per round. A round answered in under IMMEDIATE_ROUND_MS is paced from the second in a row; a slower one
    // resets the pace but took that long itself: at most two rounds per IMMEDIATE_ROUND_MS, however busy the
    // machine (a busy loop here is thousands of requests a second; paced on a quiet machine, a few dozen).
    t.true(sent < 9 * 2 * (windowMs / IMMEDIATE_ROUND_MS), `${sent} requests in ${windowMs} ms`);
  });
}

test("paced long-poll › given a server that holds each long-poll until a real change, when edits come 300 ms after each re-arm, then no round is paced", (t) => {
  const pace = new WatchPace();
  const waits = Array.from({ length: 20 }, () => pace.after(300, "changed"));
  t.deepEqual(waits, Array(20).fill(0));
});

test("paced long-poll › given rounds answered at once, then 304s back off to the long cap and changes only to the short one", (t) => {
  const unchanged = new WatchPace();
  const changed = new WatchPace();
  const u = Array.from({ length: 12 }, () => unchanged.after(2, "unchanged"));
  const c = Array.from({ length: 12 }, () => changed.after(2, "changed"));
  t.deepEqual(u.slice(0, 4), [0, 100, 200, 400]);
  t.is(Math.max(...u), MAX_WATCH_PACE_MS);
  t.deepEqual(c.slice(0, 4), [0, 100, 200, 400]);
  t.is(Math.max(...c), MAX_CHANGED_PACE_MS);
  // and a held round resets the count
  t.is(changed.after(5000, "unchanged"), 0);
  t.is(changed.after(2, "changed"), 0);
});

test("paced long-poll › given fast failures, then they are never paced (the backoff waits) and they reset the count of immediate rounds", (t) => {
  const pace = new WatchPace();
  t.deepEqual(Array.from({ length: 5 }, () => pace.after(2, "failed")), [0, 0, 0, 0, 0], "failures alone are not paced");
  t.is(pace.after(2, "unchanged"), 0, "the first immediate round after failures is the first in a row");
  t.is(pace.after(2, "unchanged"), 100);
  t.is(pace.after(2, "failed"), 0);
  t.is(pace.after(2, "unchanged"), 0, "a failure reset the count");
});

test("paced long-poll › given rounds that took exactly IMMEDIATE_ROUND_MS, then they count as held and are never paced", (t) => {
  const pace = new WatchPace();
  t.deepEqual(Array.from({ length: 4 }, () => pace.after(IMMEDIATE_ROUND_MS, "unchanged")), [0, 0, 0, 0]);
  t.is(pace.after(IMMEDIATE_ROUND_MS - 1, "unchanged"), 0);
  t.is(pace.after(IMMEDIATE_ROUND_MS - 1, "unchanged"), 100, "just under the limit is immediate");
});
