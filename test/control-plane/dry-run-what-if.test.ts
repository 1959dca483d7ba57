// A control plane's dry run with the decision samples its sidecars push, all real processes: a sidecar started with
// --decision-log-push sends its records after traffic; `meshext policy apply --dry-run` of a candidate deny then reports
// exactly the recorded requests it would break, the fixed policy none; a dataplane without samples says so; push off
// sends nothing; under `meshext up` the sidecar pushes to its own control plane.
import test, { type ExecutionContext } from "ava";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pollUntil } from "../helpers/poll-until.js";
import { meshext, ROOT } from "../policy-tools/run-cli.js";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";
import { call, dataplane, eventually, mtp, startUp } from "./helpers.js";
import { controlPlaneProcess, metric, metricReaches, seedSamplePolicies, sidecarProcess, tempDirFor, webAndBillingTraffic } from "./pushing-mesh.js";

/** The sample MeshTrafficPermission with one more `from` item: a Deny of the clients `from` selects. */
function candidate(t: ExecutionContext, from: string): string {
  const dir = join(tempDirFor(t, "meshext-candidate-"), "candidate");
  mkdirSync(dir);
  const file = join(dir, "traffic-permission.yaml");
  writeFileSync(file, readFileSync(join(ROOT, "envoy", "policies", "traffic-permission.yaml"), "utf8") + `    - targetRef: ${from}\n      default:\n        action: Deny\n`);
  return file;
}
const BROKEN = "{kind: MeshService, name: web}";
const FIXED = "{kind: MeshServiceSubset, name: web, tags: {version: v0}}";

test("dry run what-if › pushed samples: the candidate deny reports exactly the recorded requests it breaks, the fixed one none", async (t) => {
  // Given a control plane with the sample policies and a sidecar (backend-1) pushing its decision samples
  const cp = await controlPlaneProcess(t);
  await seedSamplePolicies(t, cp);
  const sidecar = await sidecarProcess(t, cp, ["--decision-log-push", "--decision-log-push-interval", "200ms"]);

  // When web makes three allowed requests and billing one denied request
  await webAndBillingTraffic(t, sidecar.envoy);

  // Then the sidecar pushes the four records and both sides count them
  await metricReaches(cp, "meshext_control_plane_decision_samples_received_total", (n) => n === 4);
  await metricReaches(sidecar.adminUrl, "meshext_decision_log_pushed_total", (n) => n === 4);
  t.is(await metric(cp, "meshext_control_plane_decision_samples"), 4);
  t.is(await metric(sidecar.adminUrl, "meshext_decision_log_push_dropped_total"), 0);

  // When a candidate meant to deny web's old version denies all of web, and is applied as a dry run
  const broken = await meshext(["policy", "apply", "--dry-run", candidate(t, BROKEN), "--control-plane", cp]);

  // Then the what-if on backend-1 lists web's three requests as allow→deny, and not billing's
  t.is(broken.code, 0, broken.stdout + broken.stderr);
  t.regex(broken.stdout, /MeshTrafficPermission default\/backend-allow-web: valid, would be updated; selects 1 dataplane\(s\): backend-1/);
  t.regex(broken.stdout, /what-if on backend-1: 4 sample\(s\) held/);
  t.regex(broken.stdout, /^ {4}3 of 4 replayed decision\(s\) would change \(allow→deny 3\)$/m);
  for (let i = 0; i < 3; i++) t.regex(broken.stdout, new RegExp(`web-${i}: inbound GET \\S*/orders/${i} from spiffe://default/web on backend-1  \\[allow→deny\\]`));
  t.regex(broken.stdout, /after: {2}deny 403 \(MeshTrafficPermission backend-allow-web from\[2\]\)/);
  t.notRegex(broken.stdout, /billing-1/);

  // And as JSON: the counts per change class and the examples, with --fail-on-change exiting 1
  const json = await meshext(["policy", "apply", "--dry-run", candidate(t, BROKEN), "--control-plane", cp, "-o", "json", "--fail-on-change"]);
  t.is(json.code, 1, json.stderr);
  const [whatIf] = JSON.parse(json.stdout).results[0].whatIf;
  t.like(whatIf, { mesh: "default", name: "backend-1", selectedBy: ["candidate", "stored"], samples: 4, report: { records: 4, replayed: 4, changed: 3, unchanged: 1, classes: { "allow→deny": 3 }, unreplayable: {} } });
  t.deepEqual(whatIf.report.examples.map((e: { requestId: string }) => e.requestId), ["web-0", "web-1", "web-2"]);

  // When the policy is fixed to deny only web's old version, the same dry run breaks nothing
  const fixed = await meshext(["policy", "apply", "--dry-run", candidate(t, FIXED), "--control-plane", cp, "--fail-on-change"]);
  t.is(fixed.code, 0, fixed.stdout + fixed.stderr);
  t.regex(fixed.stdout, /^ {4}0 of 4 replayed decision\(s\) would change$/m);
  // And nothing was stored by any of the dry runs
  t.is((await call(cp, "GET", "/meshes/default/meshtrafficpermissions/backend-allow-web")).body.spec.from.length, 2);
});

test("dry run what-if › a selected dataplane without samples says so; ?examples bounds the examples", async (t) => {
  // Given a pushing backend-1 with recorded traffic, and a second backend dataplane whose sidecar pushes nothing
  const cp = await controlPlaneProcess(t);
  await seedSamplePolicies(t, cp);
  const sidecar = await sidecarProcess(t, cp, ["--decision-log-push", "--decision-log-push-interval", "200ms"]);
  await webAndBillingTraffic(t, sidecar.envoy);
  await metricReaches(cp, "meshext_control_plane_decision_samples_received_total", (n) => n === 4);
  t.is((await call(cp, "PUT", "/meshes/default/dataplanes/backend-2", dataplane("backend-2", "backend"))).status, 201);

  // When the broken candidate is PUT as a dry run asking for one example
  const body = readFileSync(candidate(t, BROKEN), "utf8");
  const reply = await call(cp, "PUT", "/meshes/default/meshtrafficpermissions/backend-allow-web?dryRun=true&examples=1", body, { "content-type": "application/yaml" });

  // Then both dataplanes are selected; backend-1 has its what-if with one example, backend-2 says it has no samples
  t.is(reply.status, 200, JSON.stringify(reply.body));
  t.deepEqual(reply.body.dataplanes.items.map((d: { name: string }) => d.name), ["backend-1", "backend-2"]);
  const [one, two] = reply.body.whatIf.dataplanes;
  t.like(one, { name: "backend-1", samples: 4, summary: "3 of 4 replayed decision(s) would change (allow→deny 3)", report: { changed: 3 } });
  t.is(one.report.examples.length, 1);
  t.like(two, { name: "backend-2", samples: 0 });
  t.regex(two.summary, /no decision samples held/);
  t.false("report" in two);
  // And a bad ?examples is the client's error
  const bad = await call(cp, "PUT", "/meshes/default/meshtrafficpermissions/backend-allow-web?dryRun=true&examples=lots", body);
  t.is(bad.status, 400);
  t.is(bad.body.invalid_parameters[0].field, "examples");
});

test("dry run what-if › push off: the sidecar sends nothing and the dry run says backend-1 has no samples", async (t) => {
  // Given a sidecar following the control plane with a local decision log but no --decision-log-push
  const cp = await controlPlaneProcess(t);
  await seedSamplePolicies(t, cp);
  const log = join(tempDirFor(t, "meshext-no-push-"), "decisions.log");
  const sidecar = await sidecarProcess(t, cp, ["--decision-log", log, "--heartbeat-interval", "200ms"]);

  // When the same traffic passes, and the sidecar has written it and heartbeated since
  await webAndBillingTraffic(t, sidecar.envoy);
  await pollUntil("four lines in the local decision log", () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).length : 0), (n) => n === 4);
  const seen = async () => (await call(cp, "GET", "/meshes/default/dataplanes/backend-1")).body?.status?.lastSeenTime as string | undefined;
  const before = await seen();
  await pollUntil("a heartbeat after the traffic", seen, (s) => s !== undefined && s !== before);

  // Then the control plane received no push, and the sidecar has no push metrics at all
  t.is(await metric(cp, "meshext_control_plane_decision_sample_pushes_total"), 0);
  t.is(await metric(cp, "meshext_control_plane_decision_samples_received_total"), 0);
  t.false((await (await fetch(sidecar.adminUrl + "/metrics")).text()).includes("meshext_decision_log_push"));
  // And a dry run says backend-1 has no samples
  const reply = await call(cp, "PUT", "/meshes/default/meshtrafficpermissions/backend-allow-web?dryRun=true", readFileSync(candidate(t, BROKEN), "utf8"));
  t.like(reply.body.whatIf.dataplanes[0], { name: "backend-1", samples: 0 });
});

test("dry run what-if › meshext up -- --decision-log-push pushes to its own control plane (no --control-plane needed)", async (t) => {
  // Given `meshext up` with push on for its sidecar (demo-app-1)
  const up = await startUp(t, ["--envoy", "off"], ["--decision-log-push", "--decision-log-push-interval", "200ms"]);
  t.true(await eventually(() => up.banner().includes("Ctrl-C"), 15_000), up.banner());
  const cp = /control plane \(Kuma REST API\)\s+(http:\/\/\S+)/.exec(up.banner())![1]!;
  const grpc = /sidecar ext_proc \(gRPC\)\s+(127\.0\.0\.1:\d+)/.exec(up.banner())![1]!;
  await pollUntil("demo-app-1 registered", async () => (await call(cp, "GET", "/meshes/default/dataplanes/demo-app-1")).status, (s) => s === 200);
  // When one request is decided
  const envoy = new EnvoyExtProcClient(grpc, { messageTimeoutMs: 5000 });
  t.teardown(() => envoy.close());
  await envoy.request({ method: "GET", path: "/", headers: [["x-request-id", "up-1"]] });
  // Then its record reaches the control plane, and a dry run on demo-app-1 replays it
  await metricReaches(cp, "meshext_control_plane_decision_samples_received_total", (n) => n === 1);
  const reply = await call(cp, "PUT", "/meshes/default/meshtrafficpermissions/deny-all?dryRun=true", mtp("deny-all", "Deny"));
  t.like(reply.body.whatIf.dataplanes.find((d: { name: string }) => d.name === "demo-app-1"), { samples: 1, report: { records: 1 } });
});
