// The sidecar reads its own policy set from the embedded control plane: real sidecars A and B (their
// --dataplane-file registered by themselves) against the real control plane; an edit to a policy selecting A
// reaches A and leaves B's set untouched; a sidecar started from --dataplane-tags (as `meshext inject` renders
// it) reads its set too. In process, with the decisions of the full-list path and Kuma's lists: policy-set-source.test.ts.
import test from "ava";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestSidecar } from "../helpers/sidecar-harness.js";
import { call, controlPlaneFor, eventually } from "../control-plane/helpers.js";
import { dataplaneDoc, serviceMtp } from "./fixtures.js";

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(" ")[1]) : NaN;
}

async function action(adminUrl: string, client: string): Promise<string> {
  const r = await fetch(`${adminUrl}/explain`, { method: "POST", body: JSON.stringify({ client: { tags: { "kuma.io/service": client } } }) });
  return ((await r.json()) as { decision: { explain: { action: string } } }).decision.explain.action;
}

test("policy set (sidecar) › an edit selecting A reaches A's sidecar and not B's; B's set version stays", async (t) => {
  const { cp } = await controlPlaneFor(t);
  for (const p of [serviceMtp("on-a", "svc-a", "web"), serviceMtp("on-b", "svc-b", "web")]) await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/${p.name}`, p);
  const dir = mkdtempSync(join(tmpdir(), "meshext-policy-set-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const sidecars: Record<string, string> = {};
  for (const [name, svc] of [["a", "svc-a"], ["b", "svc-b"]] as const) {
    writeFileSync(join(dir, `${name}.json`), JSON.stringify(dataplaneDoc(name, svc)));
    const h = await startTestSidecar(["--control-plane", cp.url, "--dataplane-file", join(dir, `${name}.json`), "--mesh", "default"]);
    t.teardown(() => h.stop());
    sidecars[name] = h.adminUrl;
  }
  // given both sidecars registered and long-polling their own sets (not the lists)
  t.true(await eventually(async () => (await metric(cp.url, "meshext_control_plane_policy_set_waiters")) === 2, 20_000), "both sidecars hold a policy-set long-poll");
  t.is(await action(sidecars.a!, "web"), "allow");
  t.is(await action(sidecars.a!, "orders"), "deny");
  const versionB = await metric(sidecars.b!, "meshext_policy_set_version");
  const etagB = (await call(cp.url, "GET", "/meshes/default/dataplanes/b/_policy-set")).headers.get("etag");
  // when the policy selecting A now allows orders
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/on-a", serviceMtp("on-a", "svc-a", "orders"))).status, 200);
  // then A decides with it within a second
  const putAt = Date.now();
  t.true(await eventually(async () => (await action(sidecars.a!, "orders")) === "allow", 5000));
  t.true(Date.now() - putAt < 1000, `A followed after ${Date.now() - putAt}ms`);
  // and B was not woken: same set version in the sidecar, same ETag at the control plane, still long-polling
  await new Promise((r) => setTimeout(r, 300));
  t.is(await metric(sidecars.b!, "meshext_policy_set_version"), versionB);
  t.is((await call(cp.url, "GET", "/meshes/default/dataplanes/b/_policy-set")).headers.get("etag"), etagB);
  t.is(await action(sidecars.b!, "orders"), "deny");
  t.is(await metric(cp.url, "meshext_control_plane_policy_set_waiters"), 2);
});

test("policy set (sidecar) › a sidecar started from --dataplane-tags reads its own set once registered, not the lists", async (t) => {
  const { cp } = await controlPlaneFor(t);
  for (const p of [serviceMtp("on-a", "svc-a", "web"), serviceMtp("on-b", "svc-b", "web")]) await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/${p.name}`, p);
  // given a sidecar that registers itself from its tags (its inbound on a placeholder port the engine does not hold)
  const h = await startTestSidecar(["--control-plane", cp.url, "--dataplane-name", "a", "--dataplane-tags", "kuma.io/service=svc-a", "--mesh", "default", "--heartbeat-interval", "1s"]);
  t.teardown(() => h.stop());
  // then once registered it long-polls its own set at the control plane
  t.true(await eventually(async () => (await metric(cp.url, "meshext_control_plane_policy_set_waiters")) === 1, 20_000), "the sidecar holds a policy-set long-poll");
  // and what it holds came from the set: one policy in the source (the lists hold two), one kept
  t.true(await eventually(async () => (await metric(h.adminUrl, "meshext_policies_in_source")) === 1, 10_000), "the source's set is the control plane's selection for it");
  t.is(await metric(h.adminUrl, "meshext_policies_kept"), 1);
  // and an edit of its policy is in force within a second
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/on-a", serviceMtp("on-a", "svc-a", "orders"))).status, 200);
  const putAt = Date.now();
  t.true(await eventually(async () => (await action(h.adminUrl, "orders")) === "allow", 5000));
  t.true(Date.now() - putAt < 1000, `followed after ${Date.now() - putAt}ms`);
});
