// selection (sidecar) › a real sidecar keeps only the policies that select its dataplane, reports kept/total in
// /metrics and /explain, still reports rejections, and re-selects when its --dataplane-file changes.
import test from "ava";
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestSidecar } from "../helpers/sidecar-harness.js";

const dataplane = (service: string) => `type: Dataplane
mesh: default
name: dp-1
networking:
  address: 127.0.0.1
  inbound:
    - port: 8080
      tags: {kuma.io/service: ${service}, version: v1}
`;

const mtp = (name: string, service: string, allow: string) => `type: MeshTrafficPermission
mesh: default
name: ${name}
spec:
  targetRef: {kind: MeshService, name: ${service}}
  from:
    - {targetRef: {kind: Mesh}, default: {action: Deny}}
    - {targetRef: {kind: MeshService, name: ${allow}}, default: {action: Allow}}
`;

const POLICIES = [mtp("on-backend", "backend", "web"), mtp("on-web", "web", "orders"), mtp("on-other", "other", "web"), "type: MeshTrafficPermission\nmesh: default\nname: broken\nspec: {}\n"].join("---\n");

async function explain(adminUrl: string, client: string): Promise<{ selection: { kept: number; total: number }; decision: { explain: { action: string; policy?: string } } }> {
  const r = await fetch(`${adminUrl}/explain`, { method: "POST", body: JSON.stringify({ client: { tags: { "kuma.io/service": client } } }) });
  return (await r.json()) as never;
}

async function metric(adminUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(" ")[1]) : NaN;
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<boolean> {
  for (const end = Date.now() + timeoutMs; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (await check()) return true;
  return false;
}

test("selection › keeps what selects this dataplane, counts it, and re-selects when the dataplane file changes", async (t) => {
  // given a dataplane for backend and a directory with MTPs on backend, web and other, plus one invalid MTP
  const dir = mkdtempSync(join(tmpdir(), "meshext-selection-"));
  const dpFile = join(dir, "dataplane.yaml");
  writeFileSync(dpFile, dataplane("backend"));
  const policyDir = join(dir, "policies");
  mkdirSync(policyDir);
  writeFileSync(join(policyDir, "set.yaml"), POLICIES);
  // (--allow-invalid-policies: the invalid MTP would otherwise hold back the first load, see first-load-rejections.test.ts)
  const h = await startTestSidecar(["--policies", policyDir, "--allow-invalid-policies", "--dataplane-file", dpFile, "--dataplane-file-check-interval", "100ms"]);
  t.teardown(async () => {
    await h.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  // then only the backend MTP is kept of the three valid ones, in /explain and /metrics; web is allowed, orders denied
  const first = await explain(h.adminUrl, "web");
  t.deepEqual(first.selection, { kept: 1, total: 3 });
  t.is(first.decision.explain.action, "allow");
  t.is((await explain(h.adminUrl, "orders")).decision.explain.policy, "on-backend");
  t.is(await metric(h.adminUrl, "meshext_policies_kept"), 1);
  t.is(await metric(h.adminUrl, "meshext_policies_in_source"), 3);

  // when the dataplane file is replaced with one for web
  const tmp = join(dir, ".dp.tmp");
  writeFileSync(tmp, dataplane("web"));
  renameSync(tmp, dpFile);

  // then the set is re-selected: the web MTP decides (orders allowed, web denied), still 1 of 3 kept
  t.true(await eventually(async () => (await explain(h.adminUrl, "orders")).decision.explain.action === "allow"), "orders allowed after the change");
  const after = await explain(h.adminUrl, "web");
  t.is(after.decision.explain.action, "deny");
  t.is(after.decision.explain.policy, "on-web");
  t.deepEqual(after.selection, { kept: 1, total: 3 });
});
