// The wasm filter as envoy.yaml configures it: the real build/meshext_drain.wasm accepts envoy.yaml's plugin
// JSON, polls a cluster that exists, and understands the real sidecar process's /drain answers.
import test from "ava";
import { SIDECAR_FLAGS } from "../../extproc/config/sidecar.js";
import { adminUrl, spawnMeshext } from "../drain/meshext-process.js";
import { EnvoyProcess, ProxyWasmHost } from "../helpers/proxy-wasm-host.js";
import { closeResponses, CONTRACT, exchange, FILTER_WASM } from "../wasm/fixtures.js";
import { clusterAddress, clusters, envoyConfig, hostPort, wasmPluginConfig } from "./envoy-config.js";

/** The filter in an emulated Envoy that knows exactly envoy.yaml's clusters. */
function filterAsConfigured(): ProxyWasmHost {
  const process = new EnvoyProcess({ clusters: [...clusters(envoyConfig()).keys()] });
  return ProxyWasmHost.load(FILTER_WASM, { process });
}

function header(headers: Array<[string, string]>, name: string): string | undefined {
  return headers.find(([k]) => k === name)?.[1];
}

test("envoy › the real wasm filter accepts envoy.yaml's plugin configuration", (t) => {
  const host = filterAsConfigured();
  t.true(host.startPlugin(wasmPluginConfig(envoyConfig())), host.logs("critical").join(" | "));
  t.deepEqual(host.logs("critical"), []);
});

test("envoy › the wasm filter rejects a misspelt field in the plugin configuration (the check can fail)", (t) => {
  const config = JSON.parse(wasmPluginConfig(envoyConfig()));
  config.poll.periodMS = 1000;
  const host = filterAsConfigured();
  t.false(host.startPlugin(JSON.stringify(config)));
  t.regex(host.logs("critical").join(" "), /poll\.periodMS: unknown field/);
});

test("envoy › the plugin configuration polls the contract's drain path through the sidecar admin cluster", (t) => {
  const envoy = envoyConfig();
  const plugin = JSON.parse(wasmPluginConfig(envoy));
  t.is(plugin.poll.path, CONTRACT.drainPath);
  t.is(plugin.poll.authority, hostPort(clusterAddress(envoy, plugin.poll.cluster)));
  t.is(CONTRACT.defaultAuthority, SIDECAR_FLAGS.find((f) => f.key === "adminListen")!.default, "wasm/contract.json vs the sidecar's admin port");

  const host = filterAsConfigured();
  t.true(host.startPlugin(wasmPluginConfig(envoy)));
  host.advance(host.tickPeriodMs());
  const [call] = host.pendingHttpCalls();
  t.truthy(call, "no poll after one tick");
  t.is(call!.cluster, plugin.poll.cluster);
  t.is(header(call!.headers, ":path"), CONTRACT.drainPath);
  t.is(header(call!.headers, ":method"), "GET");
  t.is(header(call!.headers, ":authority"), plugin.poll.authority);
});

test("envoy › the real sidecar's /drain answers drive the real filter: serving, then Connection: close once draining", async (t) => {
  // Given the sidecar process and the filter configured as in envoy.yaml
  const sidecar = spawnMeshext(["sidecar", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--drain-min", "0s", "--drain-time", "20s"]);
  t.teardown(() => sidecar.child.kill("SIGKILL"));
  const admin = await adminUrl(sidecar);
  const host = filterAsConfigured();
  t.true(host.startPlugin(wasmPluginConfig(envoyConfig())));

  /** One tick; the poll the filter issues is forwarded to the sidecar process and its answer fed back. */
  const pollThroughSidecar = async () => {
    host.advance(host.tickPeriodMs());
    const call = host.pendingHttpCalls()[0];
    if (!call) throw new Error("no poll issued");
    const res = await fetch(`${admin}${header(call.headers, ":path")}`);
    host.respondHttpCall(call.token, { status: res.status, body: await res.text() });
  };

  // When the sidecar is serving
  await pollThroughSidecar();
  const before = exchange(host, { protocol: "HTTP/1.1" });
  // Then no close, gauge 0, a successful poll
  t.is(host.responseHeader(before, "connection"), undefined);
  t.is(host.responseHeader(before, CONTRACT.closeHeader!), undefined);
  t.is(host.metric(CONTRACT.metricDraining!), 0);
  t.is(host.metric(CONTRACT.metricPollSuccesses!), 1);

  // When the sidecar starts draining (POST /drain) and the filter polls again
  t.is((await fetch(`${admin}/drain`, { method: "POST" })).status, 202);
  await pollThroughSidecar();
  const during = exchange(host, { protocol: "HTTP/1.1" });
  // Then HTTP/1.1 responses carry connection: close (for the Lua shim), the gauge is 1, no poll errors
  t.is(host.responseHeader(during, "connection"), "close");
  t.is(host.responseHeader(during, CONTRACT.closeHeader!), CONTRACT.closeHeaderValue);
  t.is(host.responseHeader(during, CONTRACT.drainingHeader!), CONTRACT.drainingHeaderValue);
  t.is(host.metric(CONTRACT.metricDraining!), 1);
  t.is(closeResponses(host), 1);
  t.is(host.metric(CONTRACT.metricPollSuccesses!), 2);
});
