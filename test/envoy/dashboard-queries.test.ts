// Every PromQL expression of the Grafana dashboard and of the alert rules, run by a real Prometheus against real
// sidecars and a real control plane (both scraped) after allow, deny, delay, abort, outbound and failing traffic and a drain:
// each parses, and each returns data — except the series only Envoy exports (the wasm filter's, named in
// wasm/contract.json, and Envoy's own), which are listed as Envoy-only and must name real Envoy series.
import test, { type ExecutionContext } from "ava";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { adminUrl, spawnMeshext, type MeshextProcess } from "../drain/meshext-process.js";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";
import { RunningPrometheus, scrapeConfigFor } from "../helpers/prometheus.js";
import { which } from "../helpers/tools.js";
import { ALERTS_YML, DASHBOARD_JSON, ENVOY_DIR, PROMETHEUS_YML, readYaml, ROOT, type Yaml } from "./envoy-config.js";

const SIDECAR_JOB = "meshext-sidecar";
const CONTROL_PLANE_JOB = "meshext-control-plane";
/** What Grafana puts in for its built-in variables when the dashboard runs (the test's scrape interval is 1 s). */
const GRAFANA_VARIABLES: Record<string, string> = { $__rate_interval: "1m", $__range: "10m", $namespace: ".*", $dataplane: ".*", $instance: ".*", $mesh: ".*" };

/** Metric names the wasm filter exports on Envoy's /stats/prometheus, from the contract the filter is built with. */
const WASM_METRICS = new Set<string>(
  Object.entries(JSON.parse(readFileSync(join(ROOT, "wasm", "contract.json"), "utf8")) as Record<string, string>)
    .filter(([key, value]) => key.startsWith("metric") && value.startsWith("meshext_"))
    .map(([, value]) => value),
);
/**
 * Envoy's own series the dashboard and alerts read: http.<stat_prefix>.downstream_rq_active (what the drain controller
 * polls, extproc/drain/envoy-admin.ts) and the ext_proc filter's http.<stat_prefix>.ext_proc.* counters, as Envoy's
 * Prometheus output names them, with the prefix as a label (test/envoy/ext-proc-stat-names.test.ts checks the
 * ext_proc names against a real Envoy).
 */
const ENVOY_NATIVE_METRICS = new Set(["envoy_http_downstream_rq_active", "envoy_http_ext_proc_streams_started", "envoy_http_ext_proc_streams_failed", "envoy_http_ext_proc_message_timeouts"]);
const isEnvoyOnly = (name: string): boolean => WASM_METRICS.has(name) || ENVOY_NATIVE_METRICS.has(name);

/** Label names of Envoy's series that look like metric names (in `by (…)` clauses). */
const ENVOY_LABELS = new Set(["envoy_http_conn_manager_prefix"]);

/** Vector selectors (metric name with its matchers) in a PromQL expression. */
export function vectorSelectors(expr: string): Array<{ name: string; selector: string }> {
  return [...expr.matchAll(/\b((?:meshext|envoy)_[a-zA-Z0-9_]+)(\{[^}]*\})?/g)]
    .filter((m) => !ENVOY_LABELS.has(m[1]!))
    .map((m) => ({ name: m[1]!, selector: m[1]! + (m[2] ?? "") }));
}

const withVariables = (expr: string): string => Object.entries(GRAFANA_VARIABLES).reduce((e, [name, value]) => e.split(name).join(value), expr);

interface Expression {
  where: string;
  expr: string;
}

function dashboardExpressions(): Expression[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD_JSON, "utf8"));
  return dashboard.panels
    .filter((p: Yaml) => p.type !== "row")
    .flatMap((p: Yaml) => p.targets.map((q: Yaml) => ({ where: `panel "${p.title}" ${q.refId}`, expr: withVariables(q.expr) })));
}

/** The dashboard's query variables (mesh, namespace, dataplane, instance): `label_values(selector, label)`. */
function variableQueries(): Array<{ name: string; selector: string; label: string }> {
  const dashboard = JSON.parse(readFileSync(DASHBOARD_JSON, "utf8"));
  return dashboard.templating.list
    .filter((v: Yaml) => v.type === "query")
    .map((v: Yaml) => {
      const m = /^label_values\((.+), (\w+)\)$/.exec(v.query.query)!;
      return { name: v.name, selector: withVariables(m[1]!), label: m[2]! };
    });
}

function alertExpressions(): Expression[] {
  return parse(readFileSync(ALERTS_YML, "utf8")).groups.flatMap((g: Yaml) => g.rules.map((r: Yaml) => ({ where: `alert ${r.alert}`, expr: r.expr })));
}

/** Runs `expr`; an error (a parse error, say) is returned as text. */
async function tryQuery(prometheus: RunningPrometheus, expr: string): Promise<{ samples: number; error?: string }> {
  try {
    return { samples: (await prometheus.query(expr)).length };
  } catch (err) {
    return { samples: 0, error: (err as Error).message };
  }
}

/** Sidecar selectors of `expr` that select no series (Envoy-only names are not looked for here). */
async function selectorsWithoutData(prometheus: RunningPrometheus, expr: string): Promise<string[]> {
  const missing: string[] = [];
  for (const { name, selector } of vectorSelectors(expr)) {
    if (isEnvoyOnly(name)) continue;
    if ((await tryQuery(prometheus, selector)).samples === 0) missing.push(selector);
  }
  return missing;
}

/** Policies for the control plane: the samples, with fault injection made deterministic (clients `slow` and `chaos`). */
function seedPolicies(dir: string): string {
  const policies = join(dir, "policies");
  mkdirSync(policies);
  for (const f of ["traffic-permission.yaml", "rate-limit.yaml", "http-route.yaml"]) copyFileSync(join(ENVOY_DIR, "policies", f), join(policies, f));
  const tagged = (service: string) => ({ kind: "MeshSubset", tags: { "kuma.io/service": service } });
  const faults = {
    type: "MeshFaultInjection",
    mesh: "default",
    name: "backend-faults",
    spec: {
      targetRef: { kind: "MeshService", name: "backend" },
      from: [
        { targetRef: tagged("slow"), default: { http: [{ delay: { value: "5ms", percentage: 100 } }] } },
        { targetRef: tagged("chaos"), default: { http: [{ abort: { httpStatus: 503, percentage: 100 } }] } },
      ],
    },
  };
  // The sample MeshTrafficPermission allows only `web`; let `slow` and `chaos` through so their faults apply.
  const permit = {
    type: "MeshTrafficPermission",
    mesh: "default",
    name: "backend-allow-test-clients",
    spec: { targetRef: { kind: "MeshService", name: "backend" }, from: [{ targetRef: tagged("slow"), default: { action: "Allow" } }, { targetRef: tagged("chaos"), default: { action: "Allow" } }] },
  };
  writeFileSync(join(policies, "faults.yaml"), JSON.stringify(faults));
  writeFileSync(join(policies, "permit.yaml"), JSON.stringify(permit));
  return policies;
}

interface Stack {
  prometheus: RunningPrometheus;
}

/** Control plane, two sidecars (one synced and then draining, one that never loads a policy set), traffic, Prometheus. */
async function startStack(t: ExecutionContext, prometheusBinary: string): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), "meshext-dashboard-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const kill = (p: MeshextProcess) => t.teardown(() => void p.child.kill("SIGKILL"));

  // Given a real control plane holding the sample policies (fault injection made deterministic)
  const cp = spawnMeshext(["control-plane", "--listen", "127.0.0.1:0", "--data-dir", join(dir, "cp"), "--token", "t0ken"]);
  kill(cp);
  const cpUrl = String((await cp.waitForLine((l) => l.msg === "control plane listening", 30_000)).url);
  execFileSync(process.execPath, [join(ENVOY_DIR, "seed", "seed.mjs")], { env: { ...process.env, CONTROL_PLANE: cpUrl, CONTROL_PLANE_TOKEN: "t0ken", POLICIES: seedPolicies(dir) }, encoding: "utf8" });

  // And a sidecar following it, with the decision log on, and a second one that never loads a policy set
  const synced = spawnMeshext([
    "sidecar", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
    "--control-plane", cpUrl, "--control-plane-token", "t0ken", "--dataplane-file", join(ENVOY_DIR, "dataplane.yaml"),
    "--trust-kuma-tags-header", "--drain-min", "60s", "--drain-time", "120s", "--decision-log", join(dir, "decisions.log"),
  ]);
  kill(synced);
  // (its --policies directory holds only a rejected document, which keeps the first load from applying)
  const rejectedOnly = join(dir, "rejected-only");
  mkdirSync(rejectedOnly);
  writeFileSync(join(rejectedOnly, "typo.yaml"), "type: MeshTrafficPermission\nmesh: default\nname: typo\nspec:\n  targetRef: {kind: Mesh}\n  from: [{targetRef: {kind: Mesh}, default: {action: Dney}}]\n");
  const unsynced = spawnMeshext(["sidecar", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--policies", rejectedOnly]);
  kill(unsynced);
  const syncedAdmin = await adminUrl(synced);
  const unsyncedAdmin = await adminUrl(unsynced);
  const grpcOf = (p: MeshextProcess) => String(p.lines.find((l) => l.msg === "listening")!.grpc);

  // And a Prometheus scraping both sidecars and the control plane every second with the repo's scrape config and alert rules
  const targets = { [SIDECAR_JOB]: [new URL(syncedAdmin).host, new URL(unsyncedAdmin).host], [CONTROL_PLANE_JOB]: new URL(cpUrl).host };
  const prometheus = await RunningPrometheus.start(prometheusBinary, scrapeConfigFor(readYaml(PROMETHEUS_YML), targets, 1, [ALERTS_YML]));
  t.teardown(() => prometheus.stop());
  const up = await prometheus.until(`up{job="${SIDECAR_JOB}"} == 1`, (s) => s.length === 2, 30_000);
  t.is(up.length, 2, "Prometheus scrapes both sidecars before the traffic starts");
  const cpUp = await prometheus.until(`up{job="${CONTROL_PLANE_JOB}"} == 1`, (s) => s.length === 1, 30_000);
  t.is(cpUp.length, 1, "Prometheus scrapes the control plane");

  // When Envoy-like traffic flows: allowed, denied, delayed, aborted, outbound routed, one broken stream, and not-ready
  const inbound = new EnvoyExtProcClient(grpcOf(synced), { messageTimeoutMs: 5000 });
  const outbound = new EnvoyExtProcClient(grpcOf(synced), { messageTimeoutMs: 5000, initialMetadata: { "x-meshext-direction": "outbound" } });
  const early = new EnvoyExtProcClient(grpcOf(unsynced), { messageTimeoutMs: 5000 });
  t.teardown(() => [inbound, outbound, early].forEach((c) => c.close()));
  const from = (service: string): [string, string] => ["x-kuma-tags", `&kuma.io/service=${service}&`];
  const statuses: Record<string, number[]> = {};
  const send = async (label: string, client: EnvoyExtProcClient, req: Parameters<EnvoyExtProcClient["request"]>[0]) => (statuses[label] ??= []).push((await client.request(req)).status);
  for (let i = 0; i < 5; i++) {
    await send("web", inbound, { path: `/web/${i}`, headers: [from("web")] });
    await send("anonymous", inbound, { path: `/anon/${i}` });
    await send("slow", inbound, { path: `/slow/${i}`, headers: [from("slow")] });
    await send("chaos", inbound, { path: `/chaos/${i}`, headers: [from("chaos")] });
    await send("outbound", outbound, { authority: "payments", path: `/api/${i}` });
    await send("not-ready", early, { path: `/early/${i}` });
    // A counter is first scraped at its first value; traffic on both sides of a few scrapes makes rates positive.
    if (i === 1) await new Promise((r) => setTimeout(r, 2500));
  }
  t.deepEqual(statuses, { web: [200, 200, 200, 200, 200], anonymous: [403, 403, 403, 403, 403], slow: [200, 200, 200, 200, 200], chaos: [503, 503, 503, 503, 503], outbound: [200, 200, 200, 200, 200], "not-ready": [503, 503, 503, 503, 503] });
  await sendBrokenStream(grpcOf(synced));
  // And the synced sidecar starts draining
  t.is((await fetch(`${syncedAdmin}/drain`, { method: "POST" })).status, 202);

  // Then (once Prometheus has scraped the drain and a few samples after the traffic)
  const drained = await prometheus.until(`meshext_sidecar_draining{job="${SIDECAR_JOB}"} == 1`, (s) => s.length === 1, 30_000);
  t.is(drained.length, 1, "the drain reached Prometheus");
  await prometheus.until(`count_over_time(meshext_sidecar_draining{job="${SIDECAR_JOB}"}[1m]) >= 3`, (s) => s.length === 2, 30_000);
  return { prometheus };
}

/** One ext_proc stream of an allowed request (`web`) with two request_headers messages: the sidecar fails it with INVALID_ARGUMENT. */
async function sendBrokenStream(grpcAddress: string): Promise<void> {
  const { credentials } = await import("@grpc/grpc-js");
  const { ExternalProcessorClient } = await import("../helpers/grpc-js-ext-proc.js");
  const client = new ExternalProcessorClient(grpcAddress, credentials.createInsecure());
  const call = client.process();
  const ended = new Promise((resolve) => call.on("status", resolve));
  call.on("error", () => {});
  call.on("data", () => {});
  const headers = { headers: { headers: [{ key: "x-kuma-tags", value: "", rawValue: Buffer.from("&kuma.io/service=web&") }] }, attributes: {}, endOfStream: false };
  call.write({ request: { $case: "requestHeaders", requestHeaders: headers }, attributes: {}, observabilityMode: false });
  call.write({ request: { $case: "requestHeaders", requestHeaders: headers }, attributes: {}, observabilityMode: false });
  await ended;
  client.close();
}

test("dashboard and alerts › every panel and alert expression parses and returns data from real sidecars (Envoy-only series listed)", async (t) => {
  t.timeout(150_000);
  const binary = which("prometheus");
  if (!binary) {
    t.log("prometheus not installed (Debian package prometheus, installed by scripts/test-deps.sh as root): skipped");
    t.pass();
    return;
  }
  const { prometheus } = await startStack(t, binary);

  // Self-check first: a broken expression is reported by the query API, and a misspelt metric by the selector check
  const broken = await tryQuery(prometheus, "sum by (direction (rate(meshext_decisions_total[1m]))");
  t.regex(broken.error ?? "", /parse error/, "a broken expression fails");
  t.deepEqual(await selectorsWithoutData(prometheus, 'sum(rate(meshext_decision_total{action="deny"}[1m]))'), ['meshext_decision_total{action="deny"}'], "a misspelt metric is found");

  // Every dashboard expression parses; those reading sidecar series return data, Envoy-only ones name Envoy series
  const envoyOnly: string[] = [];
  for (const { where, expr } of dashboardExpressions()) {
    const names = vectorSelectors(expr).map((s) => s.name);
    t.true(names.length > 0, `${where}: no metric in ${expr}`);
    if (names.every(isEnvoyOnly)) {
      const run = await tryQuery(prometheus, expr);
      t.is(run.error, undefined, `${where}: ${expr}`);
      envoyOnly.push(`${where}: ${[...new Set(names)].join(", ")}`);
      continue;
    }
    t.deepEqual(names.filter(isEnvoyOnly), [], `${where}: mixes Envoy-only and sidecar series`);
    const samples = await prometheus.until(expr, (s) => s.length > 0, 15_000).catch((err: Error) => err);
    t.false(samples instanceof Error, `${where}: ${expr}: ${samples instanceof Error ? samples.message : ""}`);
    t.true(Array.isArray(samples) && samples.length > 0, `${where} returned no data: ${expr}`);
  }
  t.log(`Envoy-only (the wasm filter's series from wasm/contract.json, and Envoy's own):\n  ${envoyOnly.join("\n  ")}`);
  t.true(envoyOnly.length >= 4);
  for (const name of WASM_METRICS) t.true(dashboardExpressions().some((e) => vectorSelectors(e.expr).some((s) => s.name === name)), `the dashboard shows ${name}`);

  // The dashboard filters by mesh, namespace and dataplane (pod): each variable lists real values, and every
  // sidecar series of every panel is narrowed to the chosen sidecars (Envoy's and the control plane's own are not theirs)
  const variables = variableQueries();
  t.deepEqual(variables.map((v) => v.name), ["mesh", "namespace", "dataplane", "instance"]);
  for (const v of variables) {
    const values = (await prometheus.query(`group by (${v.label}) (${v.selector})`)).map((r) => r.metric[v.label]);
    t.true(values.length > 0, `variable ${v.name} lists nothing: ${v.selector}`);
    if (v.name === "mesh") t.deepEqual(values, ["default"]);
    if (v.name === "dataplane") t.true(values.includes("backend-1"), values.join(", ")); // envoy/dataplane.yaml
  }
  const dashboard = JSON.parse(readFileSync(DASHBOARD_JSON, "utf8"));
  const CONTROL_PLANE_OWN = new Set(["meshext_control_plane_long_poll_waiters", "meshext_control_plane_http_request_duration_seconds_bucket"]);
  for (const p of dashboard.panels.filter((p: Yaml) => p.type !== "row")) {
    for (const q of p.targets) {
      for (const { name, selector } of vectorSelectors(q.expr)) {
        if (isEnvoyOnly(name) || CONTROL_PLANE_OWN.has(name)) continue;
        t.true(selector.includes('instance=~"$instance"'), `panel "${p.title}": ${selector} is not filtered by the variables`);
      }
    }
  }
  const panel = (title: string) => dashboard.panels.find((p: Yaml) => p.title === title);
  // Latency quantiles per pod, not of all pods' requests summed together
  for (const q of panel("ext_proc reply latency (request_headers)").targets) t.regex(q.expr, /sum by \(le, instance\)/);
  // The deny ratio counts denials only; not-ready, aborts and rate limits have their own panel
  t.regex(panel("Deny ratio").targets[0].expr, /^sum by \(instance\) \(rate\(meshext_decisions_total\{action="deny", /);
  t.regex(panel("Not ready, aborts and rate limits per second").targets[0].expr, /not-ready\|abort\|rate-limit/);
  // The decision-log panel plots rates only (no counts mixed in)
  for (const q of panel("Decision log: lines written and dropped").targets) t.regex(q.expr, /^sum by \([a-z, ]+\) \(rate\(/);
  // The policy row covers directory sources: the --policies sidecar's rejected document shows up
  const rejected = await prometheus.query(withVariables(panel("Rejected policies").targets[1].expr));
  t.true(rejected.some((r) => r.value === 1), `directory rejections: ${JSON.stringify(rejected)}`);
  t.true((await prometheus.query(withVariables(panel("Policies in the source and kept").targets[0].expr))).length >= 2, "both sidecars' policy counts");

  // Every alert rule is loaded and evaluated by Prometheus without error, its expression runs, and what it reads exists
  const expected = alertExpressions();
  const rules = await pollRules(prometheus, expected.length);
  t.deepEqual(rules.map((r) => r.name).sort(), expected.map((e) => e.where.slice("alert ".length)).sort());
  for (const rule of rules) t.is(rule.health, "ok", `${rule.name}: ${rule.lastError}`);
  for (const { where, expr } of expected) {
    const run = await tryQuery(prometheus, expr);
    t.is(run.error, undefined, `${where}: ${expr}`);
    t.deepEqual(await selectorsWithoutData(prometheus, expr), [], `${where}: selects series that do not exist`);
  }
  // And the alert meant for this situation fires: requests were decided before the first policy set
  const firing = await prometheus.until('ALERTS{alertname="MeshextDecidingBeforeFirstSync"}', (s) => s.length > 0, 15_000);
  t.true(firing.length > 0, "MeshextDecidingBeforeFirstSync is pending or firing");
});

/** The rules once each has been evaluated at least once. */
async function pollRules(prometheus: RunningPrometheus, count: number) {
  const deadline = Date.now() + 20_000;
  let rules = await prometheus.rules();
  while (Date.now() < deadline && !(rules.length === count && rules.every((r) => !r.lastEvaluation.startsWith("0001")))) {
    await new Promise((r) => setTimeout(r, 500));
    rules = await prometheus.rules();
  }
  return rules;
}
