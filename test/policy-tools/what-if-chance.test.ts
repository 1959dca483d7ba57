// What-if keeps chance out of the comparison (through the real binary, on records in the sidecar's format): a
// recorded fault or rate limit is unchanged while the same policy still applies, and reported when the candidate
// drops it; outbound records are approximate when the candidate routes match on a header the log did not keep.
import test from "ava";
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { call, controlPlaneFor } from "../control-plane/helpers.js";
import { meshext, ROOT } from "./run-cli.js";

const DATAPLANE = join(ROOT, "envoy", "dataplane.yaml");
const WEB = { tags: "kuma.io/service=web", source: "xfcc", spiffe: "spiffe://default/web" };
const base = { dataplane: "backend-1", mesh: "default", direction: "inbound", method: "GET", path: "/orders", authority: "backend", client: WEB, matched: [], reason: "", latencyMs: 0.1 };
const RECORDS = [
  { ...base, requestId: "abort-1", outcome: "abort", status: 503, kind: "MeshFaultInjection", policy: "backend-chaos", rule: "from[0]" },
  { ...base, requestId: "delay-1", outcome: "delay", delayMs: 100, kind: "MeshFaultInjection", policy: "backend-chaos", rule: "from[0]" },
  { ...base, requestId: "limited-1", outcome: "rate-limit", status: 429, kind: "MeshRateLimit", policy: "backend-rate-limit", rule: "from[0]" },
  { ...base, requestId: "out-1", direction: "outbound", authority: "payments", path: "/api/pay", client: undefined, outcome: "allow", kind: "MeshHTTPRoute", policy: "backend-to-payments", rule: "to[0].rules[0]" },
];

function setup(t: { teardown(fn: () => void): void }): { dir: string; log: string } {
  const dir = mkdtempSync(join(tmpdir(), "meshext-what-if-chance-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, "decisions.log");
  writeFileSync(log, RECORDS.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return { dir, log };
}

const whatIf = async (log: string, policies: string) => JSON.parse((await meshext(["policy", "what-if", "--decision-log", log, "--policies", policies, "--dataplane", DATAPLANE, "-o", "json"])).stdout);

test("what-if › recorded faults and rate limits replay unchanged while the same policies still apply", async (t) => {
  const { log } = setup(t);
  const report = await whatIf(log, join(ROOT, "envoy", "policies"));
  t.like(report, { records: 4, replayed: 4, changed: 0, unchanged: 4 });
});

test("what-if › dropping the fault and rate-limit policies changes those records to allow", async (t) => {
  const { dir, log } = setup(t);
  const candidate = join(dir, "candidate");
  cpSync(join(ROOT, "envoy", "policies"), candidate, { recursive: true });
  rmSync(join(candidate, "fault-injection.yaml"));
  rmSync(join(candidate, "rate-limit.yaml"));
  const report = await whatIf(log, candidate);
  t.like(report, { changed: 3, classes: { "abort→allow": 1, "delay→allow": 1, "rate-limit→allow": 1 } });
  t.deepEqual(report.examples.map((e: { requestId: string }) => e.requestId), ["abort-1", "delay-1", "limited-1"]);
  t.like(report.examples[0], { before: { outcome: "abort", policy: "backend-chaos" }, after: { outcome: "allow", policy: "backend-allow-web" } });
});

test("what-if › an outbound record is approximate when the candidate routes match on a header the log did not keep", async (t) => {
  const { dir, log } = setup(t);
  const candidate = join(dir, "candidate");
  cpSync(join(ROOT, "envoy", "policies"), candidate, { recursive: true });
  writeFileSync(
    join(candidate, "http-route.yaml"),
    "type: MeshHTTPRoute\nmesh: default\nname: backend-to-payments\nspec:\n  targetRef: {kind: MeshService, name: backend}\n  to:\n    - targetRef: {kind: MeshService, name: payments}\n      rules:\n        - matches: [{path: {type: PathPrefix, value: /api}, headers: [{type: Exact, name: x-tenant, value: blue}]}]\n          default:\n            filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-caller, value: backend}]}}]\n",
  );
  const report = await whatIf(log, candidate);
  t.is(report.approximate, 1);
  t.like(report.classes, { "allow (other deciding policy)": 1 });
});

test("what-if › --control-plane takes the dataplanes from the control plane instead of --dataplane files", async (t) => {
  // Given a control plane that holds backend-1, and a log whose records name backend-1 and ghost-1
  const { cp } = await controlPlaneFor(t);
  const dp = parse(readFileSync(DATAPLANE, "utf8"));
  t.is((await call(cp.url, "PUT", "/meshes/default/dataplanes/backend-1", dp)).status, 201);
  const { dir, log } = setup(t);
  appendFileSync(log, JSON.stringify({ ...RECORDS[0], dataplane: "ghost-1" }) + "\n");
  // When the log is replayed with the dataplanes the control plane holds
  const r = await meshext(["policy", "what-if", "--decision-log", log, "--policies", join(ROOT, "envoy", "policies"), "--control-plane", cp.url, "-o", "json"]);
  // Then backend-1's records replay and ghost-1's is counted as not replayable
  t.is(r.code, 0, r.stderr);
  t.like(JSON.parse(r.stdout), { replayed: 4, changed: 0, unreplayable: { "dataplane default/ghost-1 not among the dataplanes given": 1 } });
  // And an unreachable control plane, or neither source, is a usage error
  await cp.stop();
  const down = await meshext(["policy", "what-if", "--decision-log", log, "--policies", dir, "--control-plane", cp.url]);
  t.is(down.code, 2);
  t.regex(down.stderr, /--control-plane: cannot reach /);
  const neither = await meshext(["policy", "what-if", "--decision-log", log, "--policies", dir]);
  t.is(neither.code, 2);
  t.regex(neither.stderr, /give either --dataplane FILE… or --control-plane URL/);
});
