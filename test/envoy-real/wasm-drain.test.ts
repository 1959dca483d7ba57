// The wasm drain filter in Envoy's own V8 runtime, on the generated bootstrap: its metrics on /stats/prometheus,
// the health path, Connection: close while draining, and an upstream's copy of its private marker.
import test from "ava";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { envoyBootstrapYaml } from "../../extproc/envoy-bootstrap/bootstrap.js";
import { STATS_LISTENER } from "../../extproc/envoy-bootstrap/names.js";
import { installStackDrain, postDrain, untilFilterDraining, WASM_CONTRACT as contract, wasmMetrics } from "../helpers/envoy-drain.js";
import { stackBootstrapOptions, startEnvoyStack } from "../helpers/envoy-stack.js";
import { openHttp1 } from "../helpers/http1-client.js";
import { pollUntil } from "../helpers/poll-until.js";
import { freePort } from "../helpers/prometheus.js";
import { promTypes } from "../helpers/prometheus-text.js";
import { requireEnvoy, startEnvoy, validateBootstrap } from "../helpers/real-envoy.js";

const DRAINING_HEADER = contract.drainingHeader!;
const CLOSE_HEADER = contract.closeHeader!;

const METRICS = {
  [contract.metricDraining!]: "gauge",
  [contract.metricStartedSeconds!]: "gauge",
  [contract.metricDeadlineSeconds!]: "gauge",
  [contract.metricCloseResponses!]: "counter",
  [contract.metricHealthRefusals!]: "counter",
  [contract.metricPollSuccesses!]: "counter",
};

test("real envoy › wasm: the filter's metrics are on Envoy's /stats/prometheus under the contract's names, and its polls succeed", async (t) => {
  // Given the generated bootstrap in a real Envoy, the sidecar serving GET /drain
  const stack = await startEnvoyStack(t);
  if (!stack) return;
  installStackDrain(stack);
  // When the filter has polled the sidecar at least once (polls before the drain controller was installed may have
  // failed: Envoy starts polling at once), and then twice more
  const first = await pollUntil("a successful poll", () => wasmMetrics(stack), (m) => (m.get(contract.metricPollSuccesses!) ?? 0) >= 1);
  const pollErrors = (m: Map<string, number>) => [...m].filter(([k, v]) => k.startsWith(contract.metricPollErrors!) && v > 0);
  const successes = first.get(contract.metricPollSuccesses!)!;
  const samples = await pollUntil("two more successful polls", () => wasmMetrics(stack), (m) => m.get(contract.metricPollSuccesses!)! >= successes + 2, 15_000);
  // Then every metric of the contract is exported with its type, the namespace stripped, and the state is serving
  const types = promTypes(await stack.envoy.prometheus());
  for (const [name, type] of Object.entries(METRICS)) {
    t.is(types.get(name), type, name);
    t.true(samples.has(name), name);
  }
  t.is(samples.get(contract.metricDraining!), 0);
  t.is(samples.get(contract.metricStartedSeconds!), 0);
  t.is(samples.get(contract.metricCloseResponses!), 0);
  // and no poll failed since (a failed poll would show as the reason-labelled counter)
  t.deepEqual(pollErrors(samples), pollErrors(first));
});

test("real envoy › wasm: a failing poll is counted with its reason as a Prometheus label", async (t) => {
  // Given the sidecar without drain routes (its admin answers GET /drain with 404)
  const stack = await startEnvoyStack(t);
  if (!stack) return;
  // When the filter polls
  const samples = await pollUntil("a failed poll", () => wasmMetrics(stack), (m) => (m.get(`${contract.metricPollErrors}{reason="${contract.pollErrorStatus}"}`) ?? 0) >= 1);
  // Then the failure is counted under reason="status" (the stats_tags rule turns the name suffix into a label)
  t.true(samples.get(`${contract.metricPollErrors}{reason="${contract.pollErrorStatus}"}`)! >= 1);
  t.is(samples.get(contract.metricPollSuccesses!) ?? 0, 0);
  t.false([...samples.keys()].some((k) => k.includes("_reason=") || k.includes("_reason_")), "no reason left in a metric name");
});

test("real envoy › wasm: the health path answers 200 while serving and 503 while draining, without reaching the app", async (t) => {
  // Given a serving data plane
  const stack = await startEnvoyStack(t);
  if (!stack) return;
  installStackDrain(stack);
  await pollUntil("a successful poll", () => wasmMetrics(stack), (m) => (m.get(contract.metricPollSuccesses!) ?? 0) >= 1);
  // When the health path is asked while serving
  const serving = await fetch(`${stack.inboundUrl}${contract.defaultHealthPath}`);
  // Then the filter answers 200 itself
  t.is(serving.status, 200);
  t.is(await serving.text(), contract.healthBodyServing);
  t.is(serving.headers.get("content-type"), "application/json");
  // When a drain starts (the sidecar's POST /drain) and the filter has seen it
  t.is(await postDrain(stack), 202);
  await untilFilterDraining(stack, true);
  const refusedBefore = await pollUntil("the wait's refusals counted", () => wasmMetrics(stack), (m) => (m.get(contract.metricHealthRefusals!) ?? 0) >= 1);
  const draining = await fetch(`${stack.inboundUrl}${contract.defaultHealthPath}?probe=kubelet`);
  // Then the health path answers 503 with the draining body, counted as a refusal
  t.is(draining.status, 503);
  t.is(await draining.text(), contract.healthBodyDraining);
  const before = refusedBefore.get(contract.metricHealthRefusals!)!;
  const after = await pollUntil("the refusal counted", () => wasmMetrics(stack), (m) => m.get(contract.metricHealthRefusals!)! > before);
  t.is(after.get(contract.metricHealthRefusals!), before + 1);
  t.true(after.get(contract.metricStartedSeconds!)! > Date.now() / 1000 - 60);
  t.true(after.get(contract.metricDeadlineSeconds!)! > after.get(contract.metricStartedSeconds!)!);
  // and the app never saw a health request
  t.is(stack.app.served, 0);
});

test("real envoy › wasm: while draining, an HTTP/1.1 keep-alive connection gets Connection: close and is closed", async (t) => {
  // Given a keep-alive HTTP/1.1 connection through the inbound listener, served twice before any drain
  const stack = await startEnvoyStack(t);
  if (!stack) return;
  installStackDrain(stack);
  await pollUntil("a successful poll", () => wasmMetrics(stack), (m) => (m.get(contract.metricPollSuccesses!) ?? 0) >= 1);
  const conn = await openHttp1(stack.inboundPort);
  t.teardown(() => conn.destroy());
  for (const path of ["/one", "/two"]) {
    const res = await conn.request(path);
    t.is(res.status, 200);
    t.is(res.headers.connection, undefined, `${path}: no close while serving`);
    t.is(res.headers[DRAINING_HEADER], undefined);
  }
  t.false(conn.isClosed());
  // When a drain starts and the filter has seen it
  t.is(await postDrain(stack), 202);
  await untilFilterDraining(stack, true);
  // (the wait's own health answers are closed too; the counter is flushed on the filter's tick)
  const closedBefore = (await pollUntil("the wait's closes counted", () => wasmMetrics(stack), (m) => (m.get(contract.metricCloseResponses!) ?? 0) >= 1)).get(contract.metricCloseResponses!)!;
  const res = await conn.request("/three");
  // Then the response is served, says Connection: close and that we are draining, without the private marker
  t.is(res.status, 200);
  t.is(res.headers.connection, "close");
  t.is(res.headers[DRAINING_HEADER], contract.drainingHeaderValue);
  t.is(res.headers[CLOSE_HEADER], undefined);
  // and Envoy closes the connection after it
  await conn.closed;
  t.true(conn.isClosed());
  const m = await pollUntil("the close counted", () => wasmMetrics(stack), (x) => x.get(contract.metricCloseResponses!)! > closedBefore);
  t.is(m.get(contract.metricCloseResponses!), closedBefore + 1);
  t.is(stack.app.served, 3);
});

test("real envoy › wasm: the upstream's own x-meshext-close is neither acted on nor passed on outside a drain", async (t) => {
  // Given a serving data plane whose app sends the filter's private close marker on its responses
  const stack = await startEnvoyStack(t);
  if (!stack) return;
  installStackDrain(stack);
  await pollUntil("a successful poll", () => wasmMetrics(stack), (m) => (m.get(contract.metricPollSuccesses!) ?? 0) >= 1);
  const conn = await openHttp1(stack.inboundPort);
  t.teardown(() => conn.destroy());
  // When a client calls it twice on one keep-alive connection
  const marker = `set-header=${contract.closeHeader}:${contract.closeHeaderValue}`;
  const first = await conn.request(`/?${marker}`);
  const second = await conn.request(`/?${marker}`);
  // Then neither response carries the marker or Connection: close, and the connection stays open
  for (const res of [first, second]) {
    t.is(res.status, 200);
    t.is(res.headers[CLOSE_HEADER], undefined);
    t.is(res.headers.connection, undefined);
  }
  t.false(conn.isClosed());
  t.is(stack.app.served, 2);
  // and the filter counted no close
  t.is((await wasmMetrics(stack)).get(contract.metricCloseResponses!), 0);
});

test("real envoy › wasm: a plugin configuration the filter rejects stops Envoy from starting, with every violation in its log", async (t) => {
  // Given the generated bootstrap with a plugin configuration that breaks two rules
  const found = requireEnvoy(t);
  if (!found) return;
  const yaml = envoyBootstrapYaml(stackBootstrapOptions(1, { grpc: "127.0.0.1:1", admin: "127.0.0.1:1" }, {}), "a test").replace(
    /"periodMs": \d+/,
    '"periodMs": 5, "bogus": true',
  );
  t.regex(yaml, /"bogus": true/);
  // When Envoy starts on it
  const error = await t.throwsAsync(startEnvoy(found, yaml, { readyTimeoutMs: 30_000 }));
  // Then Envoy exits instead of serving, and its log names the filter's violations
  t.regex(error!.message, /it exited/);
  t.regex(error!.message, /meshext_drain: invalid plugin configuration: .*poll\.periodMs: expected an integer 100\.\.3600000/);
  t.regex(error!.message, /bogus/);
});

test("real envoy › wasm: `envoy --mode validate` runs the filter's on_configure, so validation (meshext run's first step) rejects a bad plugin configuration", async (t) => {
  // Given the same bad plugin configuration in a file
  const found = requireEnvoy(t);
  if (!found) return;
  const dir = mkdtempSync(join(tmpdir(), "meshext-bad-plugin-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "envoy.yaml");
  writeFileSync(file, envoyBootstrapYaml(stackBootstrapOptions(1, { grpc: "127.0.0.1:1", admin: "127.0.0.1:1" }, {}), "a test").replace(/"periodMs": \d+/, '"periodMs": 5'));
  // When Envoy validates it
  const result = validateBootstrap(found, file);
  // Then validation fails with the filter's own message and Envoy's "Unable to create Wasm plugin"
  t.false(result.ok, result.output);
  t.regex(result.output, /meshext_drain: invalid plugin configuration: poll\.periodMs/);
  t.regex(result.output, /Unable to create Wasm plugin meshext_drain/);
});

test("real envoy › stats listener: serves /stats/prometheus (the filter's metrics), /ready and the sidecar's /metrics, and 404s every admin path that acts", async (t) => {
  // Given the generated bootstrap with its stats listener (Envoy's admin on a known loopback port, as meshext run has it)
  const adminPort = await freePort();
  const stack = await startEnvoyStack(t, { bootstrap: (o) => ({ ...o, admin: { host: "127.0.0.1", port: adminPort } }) });
  if (!stack) return;
  installStackDrain(stack);
  const stats = `http://127.0.0.1:${await stack.envoy.listenerPort(STATS_LISTENER)}`;
  // When Prometheus scrapes it
  const prom = await fetch(`${stats}/stats/prometheus`);
  const ready = await fetch(`${stats}/ready`);
  const sidecarMetrics = await fetch(`${stats}/metrics`);
  // Then it gets Envoy's metrics with the filter's, Envoy's readiness and the sidecar's metrics
  t.is(prom.status, 200);
  const promText = await prom.text();
  for (const name of Object.keys(METRICS)) t.regex(promText, new RegExp(`^${name}\\b`, "m"), name);
  t.is(ready.status, 200);
  t.is((await ready.text()).trim(), "LIVE");
  t.is(sidecarMetrics.status, 200);
  t.regex(await sidecarMetrics.text(), /^meshext_sidecar_draining 0$/m);
  // When someone on the network tries the admin paths that change Envoy (and a path trick around the exact match)
  for (const [method, path] of [["POST", "/healthcheck/fail"], ["POST", "/quitquitquit"], ["POST", "/drain_listeners"], ["POST", "/logging?level=trace"], ["GET", "/config_dump"], ["POST", "/drain"]] as const) {
    const res = await fetch(`${stats}${path}`, { method });
    // Then each is 404 from the listener itself
    t.is(res.status, 404, `${method} ${path}`);
    t.regex(await res.text(), /only \/stats\/prometheus, \/ready and \/metrics/);
  }
  // (fetch resolves dot segments itself: a raw client sends them as written, and the exact match still refuses)
  const raw = await openHttp1(Number(new URL(stats).port));
  t.teardown(() => raw.destroy());
  const dotted = await raw.request("/stats/prometheus/../../healthcheck/fail", {}, "POST");
  t.is(dotted.status, 404);
  // and Envoy is untouched: still LIVE (not failing health checks), still running, and the sidecar is not draining
  const admin = await fetch(`${stack.envoy.adminUrl}/ready`);
  t.is(admin.status, 200);
  t.is((await admin.text()).trim(), "LIVE");
  t.is(stack.envoy.process.exitCode, null);
  const after = await fetch(`${stack.sidecar!.adminUrl}/drain`);
  t.is(((await after.json()) as { draining: boolean }).draining, false);
});
