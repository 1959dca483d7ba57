// `meshext policy what-if` through the real binary, on a decision log a real sidecar wrote (in process, real gRPC):
// a candidate deny that breaks recorded requests is reported request by request; the fixed candidate breaks none;
// malformed lines are counted and skipped; bad input exits 2 with a readable message.
import test, { type ExecutionContext } from "ava";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";
import { startTestSidecar } from "../helpers/sidecar-harness.js";
import { meshext, ROOT, samplePoliciesWithoutFaults } from "./run-cli.js";

const DATAPLANE = join(ROOT, "envoy", "dataplane.yaml");
const xfcc = (service: string): [string, string] => ["x-forwarded-client-cert", `By=spiffe://default/backend;URI=spiffe://default/${service}`];

/** A candidate: those policies with one more `from` item in backend-allow-web: a Deny of the clients `from` selects. */
function candidate(dir: string, name: string, from: string): string {
  const out = samplePoliciesWithoutFaults(join(dir, name));
  const file = join(out, "traffic-permission.yaml");
  writeFileSync(file, readFileSync(file, "utf8") + `    - targetRef: ${from}\n      default:\n        action: Deny\n`);
  return out;
}

async function recordedLog(t: ExecutionContext): Promise<{ dir: string; log: string }> {
  const dir = mkdtempSync(join(tmpdir(), "meshext-what-if-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, "decisions.log");
  const harness = await startTestSidecar(["--policies", samplePoliciesWithoutFaults(join(dir, "recorded")), "--dataplane-file", DATAPLANE, "--decision-log", log]);
  const envoy = new EnvoyExtProcClient(harness.grpcAddress, { messageTimeoutMs: 5000 });
  try {
    for (let i = 0; i < 3; i++) t.not((await envoy.request({ method: "GET", path: `/orders/${i}`, headers: [xfcc("web"), ["x-request-id", `web-${i}`]] })).status, 403);
    t.is((await envoy.request({ method: "POST", path: "/admin", headers: [xfcc("billing"), ["x-request-id", "billing-1"]] })).status, 403);
  } finally {
    envoy.close();
    await harness.stop();
  }
  const deadline = Date.now() + 5000;
  while ((!existsSync(log) || readFileSync(log, "utf8").split("\n").filter(Boolean).length < 4) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return { dir, log };
}

test("what-if › a deny that breaks recorded requests lists each of them; the fixed policy breaks none", async (t) => {
  // Given a decision log of a real sidecar: web allowed three times, billing denied once
  const { dir, log } = await recordedLog(t);
  const records = readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  t.is(records.length, 4);
  t.like(records[0], { dataplane: "backend-1", mesh: "default", client: { source: "xfcc", spiffe: "spiffe://default/web" } });

  // When a candidate meant to deny the legacy version of web denies all of web (a wrong tag), and is replayed
  const broken = candidate(dir, "broken", "{kind: MeshService, name: web}");
  const bad = await meshext(["policy", "what-if", "--decision-log", log, "--policies", broken, "--dataplane", DATAPLANE]);

  // Then exactly web's three requests are reported as allow→deny, before/after with the deciding policy
  t.is(bad.code, 0, bad.stderr);
  t.regex(bad.stdout, /^3 of 4 replayed decision\(s\) would change \(allow→deny 3\)$/m);
  for (let i = 0; i < 3; i++) t.regex(bad.stdout, new RegExp(`web-${i}: inbound GET \\S*/orders/${i} from spiffe://default/web on backend-1  \\[allow→deny\\]`));
  t.regex(bad.stdout, /before: allow \(MeshTrafficPermission backend-allow-web from\[1\]\)/);
  t.regex(bad.stdout, /after: {2}deny 403 \(MeshTrafficPermission backend-allow-web from\[2\]\)/);
  t.notRegex(bad.stdout, /billing-1/);

  // And as JSON for CI, with --fail-on-change exiting 1
  const json = await meshext(["policy", "what-if", "--decision-log", log, "--policies", broken, "--dataplane", DATAPLANE, "-o", "json", "--fail-on-change"]);
  t.is(json.code, 1);
  const report = JSON.parse(json.stdout);
  t.like(report, { records: 4, replayed: 4, changed: 3, unchanged: 1, malformed: 0, classes: { "allow→deny": 3 } });
  t.deepEqual(report.examples.map((e: { requestId: string }) => e.requestId), ["web-0", "web-1", "web-2"]);

  // When the policy is fixed to deny only web's legacy version, the same replay changes nothing
  const fixed = candidate(dir, "fixed", "{kind: MeshServiceSubset, name: web, tags: {version: v0}}");
  const good = await meshext(["policy", "what-if", "--decision-log", log, "--policies", fixed, "--dataplane", DATAPLANE, "--fail-on-change"]);
  t.is(good.code, 0, good.stdout + good.stderr);
  t.regex(good.stdout, /^0 of 4 replayed decision\(s\) would change$/m);
});

test("what-if › malformed lines and records it cannot replay are counted and skipped, never a crash", async (t) => {
  // Given a recorded log with garbage, a non-record and a record of an unknown dataplane appended
  const { log } = await recordedLog(t);
  appendFileSync(log, 'not json at all\n{"just":"an object"}\n[1,2]\n');
  appendFileSync(log, JSON.stringify({ time: "2026-01-01T00:00:00Z", dataplane: "ghost-1", direction: "inbound", method: "GET", path: "/", authority: "x", client: { tags: "", source: "none" }, matched: [], outcome: "allow", kind: "none", reason: "", latencyMs: 0 }) + "\n");
  // When it is replayed against the unchanged sample policies
  const r = await meshext(["policy", "what-if", "--decision-log", log, "--policies", join(ROOT, "envoy", "policies"), "--dataplane", DATAPLANE, "-o", "json"]);
  // Then the good records replay unchanged and the rest are counted by kind
  t.is(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  t.like(report, { records: 5, replayed: 4, changed: 0, malformed: 3, unreplayable: { "dataplane ghost-1 not among the dataplanes given": 1 } });
  t.deepEqual(report.malformedExamples.map((m: { line: number }) => m.line), [5, 6, 7]);
  const text = await meshext(["policy", "what-if", "--decision-log", log, "--policies", join(ROOT, "envoy", "policies"), "--dataplane", DATAPLANE]);
  t.regex(text.stdout, /^0 of 4 replayed decision\(s\) would change; 3 malformed line\(s\) skipped, 1 record\(s\) not replayable$/m);
});

test("what-if › bad input: an unreadable log, a missing flag, an invalid candidate", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "meshext-what-if-bad-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // An unreadable decision log is a usage error naming the file
  const missing = await meshext(["policy", "what-if", "--decision-log", join(dir, "nope.log"), "--policies", join(ROOT, "envoy", "policies"), "--dataplane", DATAPLANE]);
  t.is(missing.code, 2);
  t.regex(missing.stderr, /--decision-log: cannot read .*nope\.log: ENOENT/);
  // A missing required flag says which
  const noPolicies = await meshext(["policy", "what-if", "--decision-log", join(dir, "nope.log"), "--dataplane", DATAPLANE]);
  t.is(noPolicies.code, 2);
  t.regex(noPolicies.stderr, /--policies is required/);
  // A candidate with an invalid document is refused with its violations; nothing is replayed
  writeFileSync(join(dir, "log"), "");
  writeFileSync(join(dir, "bad.yaml"), "type: MeshTrafficPermission\nmesh: default\nname: x\nspec:\n  targetRef: {kind: Mesh}\n  from:\n    - targetRef: {kind: Mesh}\n      default: {action: Maybe}\n");
  const invalid = await meshext(["policy", "what-if", "--decision-log", join(dir, "log"), "--policies", join(dir, "bad.yaml"), "--dataplane", DATAPLANE]);
  t.is(invalid.code, 1);
  t.regex(invalid.stderr, /bad\.yaml: document 0 \(MeshTrafficPermission x\): spec\.from\[0\]\.default\.action: /);
  t.regex(invalid.stderr, /nothing replayed/);
});
