// A --policies directory whose documents are rejected at the first load fails closed: the sidecar stays not ready
// and answers per --before-first-sync until they are fixed (or --allow-invalid-policies loads the valid rest), and
// every rejection is counted in meshext_policy_dir_rejected_policies(_total), so MeshextPoliciesRejected can fire.
import test from "ava";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually } from "../control-plane/helpers.js";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";
import { startTestSidecar, type Harness } from "../helpers/sidecar-harness.js";

/** A MeshTrafficPermission denying everyone, with a typo in the action ("Dney") when `typo`. */
const denyAll = (typo: boolean) => `type: MeshTrafficPermission
mesh: default
name: deny-all
spec:
  targetRef: {kind: Mesh}
  from: [{targetRef: {kind: Mesh}, default: {action: ${typo ? "Dney" : "Deny"}}}]
`;

function policyDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), "meshext-first-load-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function metric(h: Harness, name: string): Promise<number> {
  const m = (await h.sidecar.registry.getSingleMetric(name)?.get())?.values ?? [];
  return m.reduce((n, v) => n + v.value, 0);
}

async function startWith(t: { teardown(fn: () => Promise<void> | void): void }, args: string[]): Promise<{ h: Harness; client: EnvoyExtProcClient }> {
  const h = await startTestSidecar(["--dataplane-tags", "kuma.io/service=backend", "--trust-kuma-tags-header", ...args]);
  const client = new EnvoyExtProcClient(h.grpcAddress, { messageTimeoutMs: 5000 });
  t.teardown(async () => {
    client.close();
    await h.stop();
  });
  return { h, client };
}

const request = { path: "/", headers: [["x-kuma-tags", "&kuma.io/service=web&"]] satisfies Array<[string, string]> };

test("first load › a directory whose only MeshTrafficPermission is rejected keeps the sidecar not ready and denying, and is counted", async (t) => {
  // Given a directory whose only policy has a typo
  const dir = policyDir(t);
  writeFileSync(join(dir, "deny.yaml"), denyAll(true));
  // When the sidecar starts on it
  const { h, client } = await startWith(t, ["--policies", dir]);
  // Then it is not ready, says why (the file and the violation), and answers as before the first sync (deny: 503)
  const ready = await fetch(`${h.adminUrl}/ready`);
  t.is(ready.status, 503);
  const reason = String(((await ready.json()) as { notReady: Record<string, string> }).notReady.policies);
  t.regex(reason, /1 policy document\(s\) rejected at the first load/);
  t.true(reason.includes(join(dir, "deny.yaml")), reason);
  t.regex(reason, /action/);
  t.regex(reason, /--allow-invalid-policies/);
  t.is((await client.request(request)).status, 503, "not allowed: nothing selects no longer means allow-all");
  // And the rejection is counted where the alert reads it
  t.is(await metric(h, "meshext_policy_dir_rejected_policies"), 1);
  t.is(await metric(h, "meshext_policy_dir_rejected_policies_total"), 1);

  // When the typo is fixed
  writeFileSync(join(dir, "deny.yaml"), denyAll(false));
  // Then the policy loads, the sidecar becomes ready, denies with 403, and nothing is rejected any more
  t.true(await eventually(async () => (await fetch(`${h.adminUrl}/ready`)).status === 200), "ready once fixed");
  t.is((await client.request(request)).status, 403);
  t.is(await metric(h, "meshext_policy_dir_rejected_policies"), 0);
});

test("first load › with --allow-invalid-policies the valid documents load and the rejected ones are still counted", async (t) => {
  // Given a directory with one broken and one valid policy
  const dir = policyDir(t);
  writeFileSync(join(dir, "broken.yaml"), denyAll(true));
  writeFileSync(join(dir, "allow.yaml"), denyAll(false).replace(/deny-all/, "allow-web").replace("Deny", "Allow"));
  // When the sidecar starts on it with --allow-invalid-policies
  const { h, client } = await startWith(t, ["--policies", dir, "--allow-invalid-policies"]);
  // Then it is ready, the valid policy decides, and the broken one is counted
  t.is((await fetch(`${h.adminUrl}/ready`)).status, 200);
  t.is((await client.request(request)).status, 200);
  t.is(await metric(h, "meshext_policy_dir_rejected_policies"), 1);
});

test("first load › a rejection after the first load keeps the last good version and the sidecar ready", async (t) => {
  // Given a sidecar that loaded a valid Deny
  const dir = policyDir(t);
  writeFileSync(join(dir, "deny.yaml"), denyAll(false));
  const { h, client } = await startWith(t, ["--policies", dir]);
  t.is((await fetch(`${h.adminUrl}/ready`)).status, 200);
  // When the file is edited with a typo
  writeFileSync(join(dir, "deny.yaml"), denyAll(true));
  t.true(await eventually(async () => (await metric(h, "meshext_policy_dir_rejected_policies")) === 1), "the new rejection is counted");
  // Then the last good Deny still decides and the sidecar stays ready
  t.is((await client.request(request)).status, 403);
  t.is((await fetch(`${h.adminUrl}/ready`)).status, 200);
});
