// `meshext policy test` through the real binary: the shipped cases for the sample policies pass; a failing case
// prints expected vs actual and the explanation; bad cases files are reported, unreadable ones too.
import test from "ava";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { meshext, ROOT } from "./run-cli.js";

const SAMPLE_CASES = "envoy/policy-tests/sample-policies.cases.yaml";

function casesFile(t: { teardown(fn: () => void): void }, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "meshext-cases-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "cases.yaml"), text);
  return join(dir, "cases.yaml");
}

test("policy test › the shipped cases for the sample policies all pass", async (t) => {
  const r = await meshext(["policy", "test", SAMPLE_CASES]);
  t.is(r.code, 0, r.stdout + r.stderr);
  t.regex(r.stdout, /^PASS the 51st request in one second is rate limited$/m);
  t.regex(r.stdout, /^PASS outbound API calls to payments are tagged and uncached$/m);
  t.regex(r.stdout, /^11 passed, 0 failed$/m);
});

test("policy test › a failing case prints expected vs actual and the explanation: exit 1", async (t) => {
  // Given a case that expects billing to be allowed into backend
  const file = casesFile(t, `dataplane: ${join(ROOT, "envoy", "dataplane.yaml")}\npolicies: [${join(ROOT, "envoy", "policies")}]\ncases:\n  - name: billing may call backend\n    request: { client: { spiffeID: spiffe://default/billing }, path: /pay }\n    expect: { outcome: allow, policy: backend-allow-web }\n  - name: web may\n    request: { client: { tags: { kuma.io/service: web } } }\n    expect: { outcome: allow }\n`);
  // When it runs
  const r = await meshext(["policy", "test", file]);
  // Then it fails with what was expected, what happened and why
  t.is(r.code, 1);
  t.regex(r.stdout, /^FAIL billing may call backend$/m);
  t.regex(r.stdout, /^ {2}expected: \{"outcome":"allow","policy":"backend-allow-web"\}$/m);
  t.regex(r.stdout, /^ {2}- outcome: expected "allow", got "deny"$/m);
  t.regex(r.stdout, /^ {4}decision: deny \(local reply 403\) by MeshTrafficPermission backend-allow-web from\[0\]$/m);
  t.regex(r.stdout, /^ {4}client: {3}kuma\.io\/service=billing/m);
  t.regex(r.stdout, /^PASS web may$/m);
  t.regex(r.stdout, /^1 passed, 1 failed$/m);
  // And the JSON form carries the same
  const json = JSON.parse((await meshext(["policy", "test", "-o", "json", file])).stdout);
  t.like(json.summary, { passed: 1, failed: 1 });
});

test("policy test › bad input: unreadable file, invalid cases, rejected policies, no file", async (t) => {
  const missing = await meshext(["policy", "test", "/nonexistent/cases.yaml"]);
  t.is(missing.code, 1);
  t.regex(missing.stdout, /^ERROR \/nonexistent\/cases\.yaml .*cannot read: ENOENT/m);
  const invalid = casesFile(t, "dataplane: 7\ncases:\n  - request: {}\n    expect: { outcome: maybe }\n");
  const r = await meshext(["policy", "test", invalid]);
  t.is(r.code, 1);
  t.regex(r.stdout, /document\[0\]\.dataplane: must be a Dataplane file path or an inline Dataplane/);
  t.regex(r.stdout, /document\[0\]\.policies: must be a path or a list of paths/);
  t.regex(r.stdout, /document\[0\]\.cases\[0\]\.name: /);
  t.regex(r.stdout, /document\[0\]\.cases\[0\]\.expect\.outcome: must be one of allow, deny/);
  const dir = mkdtempSync(join(tmpdir(), "meshext-cases-bad-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "bad.yaml"), "type: MeshTrafficPermission\nmesh: default\nname: x\nspec: {targetRef: {kind: Mesh}, from: [{targetRef: {kind: Mesh}, default: {action: Maybe}}]}\n");
  const rejected = casesFile(t, `dataplane: ${join(ROOT, "envoy", "dataplane.yaml")}\npolicies: [${dir}]\ncases:\n  - name: any\n    request: {}\n    expect: { outcome: allow }\n`);
  const rr = await meshext(["policy", "test", rejected]);
  t.is(rr.code, 1);
  t.regex(rr.stdout, /^ERROR .*bad\.yaml: document 0 \(MeshTrafficPermission x\): spec\.from\[0\]\.default\.action: must be one of/m);
  const none = await meshext(["policy", "test"]);
  t.is(none.code, 2);
  t.regex(none.stderr, /no CASES file given/);
});
