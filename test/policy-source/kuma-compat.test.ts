// The same client, unchanged, against a server with only Kuma's plain list endpoints (no ETag, no long-poll):
// pagination through `next`, polling, backoff on 5xx/429, stop on 401/403.
import test from "ava";
import { eventually, mtp } from "../control-plane/helpers.js";
import { startFakeKuma } from "./fake-kuma.js";
import { sourceFor } from "./harness.js";

test("kuma-compat › lists every kind through next/offset pages and polls for changes", async (t) => {
  const kuma = await startFakeKuma(2);
  kuma.items.set("meshtrafficpermissions", ["a", "b", "c", "d", "e"].map((n) => mtp(n)));
  const { source, names } = sourceFor(kuma.url, { pollIntervalMs: 200 });
  t.teardown(async () => {
    await source.stop();
    await kuma.close();
  });
  await source.start();
  t.deepEqual(names(), ["a", "b", "c", "d", "e"]);
  t.is(source.status.mode, "poll");
  t.true(kuma.requests.some((r) => r.includes("meshtrafficpermissions") && r.includes("offset=4")), "followed next to the last page");
  t.false(kuma.requests.some((r) => r.includes("wait=")), "no long-poll against a server without ETags");
  kuma.items.set("meshtrafficpermissions", [mtp("z")]);
  t.true(await eventually(() => names().join() === "z"));
});

test("kuma-compat › 5xx and 429 back off and retry while the last good set stays", async (t) => {
  const kuma = await startFakeKuma();
  kuma.items.set("meshtrafficpermissions", [mtp("kept")]);
  const { source, names, metric } = sourceFor(kuma.url, { pollIntervalMs: 100 });
  t.teardown(async () => {
    await source.stop();
    await kuma.close();
  });
  await source.start();
  kuma.failWith = 503;
  t.true(await eventually(async () => (await metric("meshext_control_plane_sync_errors_total", { reason: "server_error" })) >= 2));
  kuma.failWith = 429;
  t.true(await eventually(async () => (await metric("meshext_control_plane_sync_errors_total", { reason: "rate_limited" })) >= 1));
  t.deepEqual(names(), ["kept"]);
  kuma.failWith = undefined;
  kuma.items.set("meshtrafficpermissions", [mtp("kept"), mtp("new")]);
  t.true(await eventually(() => names().includes("new")), "recovers after the failures");
});

for (const status of [401, 403]) {
  test(`kuma-compat › ${status} stops the source and reports it; no more requests are made`, async (t) => {
    const kuma = await startFakeKuma();
    kuma.items.set("meshtrafficpermissions", [mtp("kept")]);
    const { source, names, metric } = sourceFor(kuma.url, { pollIntervalMs: 100, token: "expired" });
    t.teardown(async () => {
      await source.stop();
      await kuma.close();
    });
    await source.start();
    kuma.failWith = status;
    t.true(await eventually(() => source.status.halted));
    const reason = status === 401 ? "unauthorized" : "forbidden";
    t.is(await metric("meshext_control_plane_sync_errors_total", { reason }), 1);
    const seen = kuma.requests.length;
    await new Promise((r) => setTimeout(r, 500));
    t.is(kuma.requests.length, seen, "halted: no retries with the same credentials");
    t.deepEqual(names(), ["kept"]);
  });
}
