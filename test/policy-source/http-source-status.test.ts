// HttpPolicySource's visible state: the status before a sync, the origin it applies with, the last-success gauge, Retry-After over backoff.
import test from "ava";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { sourceFor } from "./harness.js";
import { serveJson } from "./fixtures.js";
import { SYNC_ERROR_REASONS } from "../../extproc/policy-source/metrics.js";

test("http source status › given a source never started, then it is not halted, polls, and has nothing rejected", (t) => {
  const { source } = sourceFor("http://127.0.0.1:9");
  t.deepEqual({ ...source.status }, { halted: false, mode: "poll" });
  t.deepEqual(source.rejected, []);
  t.false(source.loaded);
});

test("http source status › given a successful sync, then the set is applied as from the control plane's mesh and the last-success gauge holds Unix seconds", async (t) => {
  const cp = await serveJson(t, () => ({ total: 0, items: [], next: null }));
  const { source, applied, metric } = sourceFor(cp.url);
  t.teardown(() => source.stop());
  const before = Date.now();
  await source.start();
  t.is(applied.at(-1)!.origin, `control-plane:${cp.url}/meshes/default`);
  const seconds = await metric("meshext_control_plane_last_sync_success_timestamp_seconds");
  t.true(seconds >= Math.floor(before / 1000) && seconds <= Date.now() / 1000 + 1, `${seconds}`);
});

/** A control plane that answers its first `failures` syncs with 429 and Retry-After: 1, then empty lists; the start time of each sync. */
async function rateLimitedFirst(t: import("ava").ExecutionContext, failures: number) {
  // Each sync reads the same lists; the first path requested marks the start of a sync.
  let firstPath: string | undefined;
  const syncs: number[] = [];
  const server = createServer((req, res) => {
    firstPath ??= req.url;
    if (req.url === firstPath) syncs.push(Date.now());
    if (syncs.length <= failures) res.writeHead(429, { "retry-after": "1" }).end();
    else res.writeHead(200, { "content-type": "application/json" }).end('{"total": 0, "items": [], "next": null}');
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => { server.closeAllConnections(); server.close(); });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, syncs };
}

for (const failures of [1, 2]) {
  const which = failures === 1 ? "the first sync" : "a retried sync";
  test(`http source status › given a 429 with Retry-After longer than the backoff, when ${which} fails, then the next try waits for Retry-After`, async (t) => {
    const cp = await rateLimitedFirst(t, failures);
    const { source, applied } = sourceFor(cp.url);
    t.teardown(() => source.stop());
    await source.start();
    t.is(source.status.lastError?.reason, "rate_limited");
    while (applied.length === 0) await new Promise((r) => setTimeout(r, 20));
    t.is(cp.syncs.length, failures + 1);
    const waited = cp.syncs[failures]! - cp.syncs[failures - 1]!;
    t.true(waited >= 950, `retried after ${waited} ms (backoff 50–200 ms, Retry-After 1 s)`);
  });
}

test("http source status › given a source just built, then every sync error reason is already exported at 0", async (t) => {
  const { registry } = sourceFor("http://127.0.0.1:9");
  const values = (await registry.getSingleMetric("meshext_control_plane_sync_errors_total")!.get()).values;
  t.deepEqual(values.map((v) => [v.labels.reason, v.value]).sort(), SYNC_ERROR_REASONS.map((r) => [r, 0]).sort());
});
