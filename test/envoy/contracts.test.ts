// envoy/envoy.yaml against the code it talks to: clusters, ports, filter order, ext_proc settings and
// timeouts, the direction metadata, the runtime guard and the stats_tags for the wasm metric names.
import test from "ava";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SIDECAR_FLAGS } from "../../extproc/config/sidecar.js";
import { EXT_PROC_SERVICE_NAME } from "../../extproc/transport/health.js";
import { DIRECTION_METADATA_KEY, INBOUND_METADATA_KEY } from "../../extproc/transport/stream.js";
import { CONTRACT } from "../wasm/fixtures.js";
import { clusterAddress, clusters, durationMs, envoyConfig, hcm, hostPort, httpFilter, httpFilters, listener, referencedClusters, readYaml, ROOT } from "./envoy-config.js";

const flagDefault = <T extends string | number | boolean>(key: (typeof SIDECAR_FLAGS)[number]["key"]): T => SIDECAR_FLAGS.find((f) => f.key === key)!.default as T;

test("envoy › every cluster referenced by a route, ext_proc or the wasm poll exists", (t) => {
  const config = envoyConfig();
  const defined = clusters(config);
  const refs = referencedClusters(config.static_resources.listeners);
  t.true(refs.length >= 4, `found only ${refs.length} references`);
  for (const ref of refs) t.true(defined.has(ref.cluster), `${ref.path} names missing cluster ${ref.cluster}`);
  const poll = JSON.parse(httpFilter(listener(config, "inbound_8080"), "envoy.filters.http.wasm").config.configuration.value).poll;
  t.true(defined.has(poll.cluster), `wasm poll.cluster ${poll.cluster} is not defined`);
});

test("envoy › the sidecar clusters point at the sidecar's default gRPC and admin addresses", (t) => {
  const config = envoyConfig();
  t.is(hostPort(clusterAddress(config, "meshext_sidecar")), flagDefault<string>("grpcListen"));
  t.is(hostPort(clusterAddress(config, "meshext_sidecar_admin")), flagDefault<string>("adminListen"));
  t.is(hostPort(clusterAddress(config, CONTRACT.defaultCluster!)), CONTRACT.defaultAuthority);
});

test("envoy › the inbound listener and app cluster agree with envoy/dataplane.yaml", (t) => {
  const config = envoyConfig();
  const inbound = readYaml(join(ROOT, "envoy", "dataplane.yaml")).networking.inbound[0];
  t.is(listener(config, "inbound_8080").address.socket_address.port_value, inbound.port);
  const route = hcm(listener(config, "inbound_8080")).route_config.virtual_hosts[0].routes[0].route.cluster;
  t.is(clusterAddress(config, route).port_value, inbound.servicePort);
  t.is(hcm(listener(config, "inbound_8080")).stat_prefix, flagDefault<string>("inboundStatPrefix"), "the drain reads http.<stat_prefix>.downstream_rq_active");
});

test("envoy › inbound HTTP filters run Lua shim, wasm drain filter, ext_proc, router in that order", (t) => {
  const names = httpFilters(listener(envoyConfig(), "inbound_8080")).map((f) => f.name);
  t.deepEqual(names, ["envoy.filters.http.lua", "envoy.filters.http.wasm", "envoy.filters.http.ext_proc", "envoy.filters.http.router"]);
});

test("envoy › the Lua shim drains the connection on the wasm filter's close marker, named alike on both sides", (t) => {
  const inbound = listener(envoyConfig(), "inbound_8080");
  const lua = httpFilter(inbound, "envoy.filters.http.lua").default_source_code.inline_string as string;
  const plugin = JSON.parse(httpFilter(inbound, "envoy.filters.http.wasm").config.configuration.value);
  t.is(plugin.closeHeader, CONTRACT.closeHeader, "envoy.yaml spells out the default marker the shim tests");
  t.regex(lua, /function envoy_on_response\(response_handle\)/);
  t.true(lua.includes(`headers:get("${plugin.closeHeader}") ~= nil`));
  t.regex(lua, /response_handle:streamInfo\(\):drainConnectionUponCompletion\(\)/);
});

test("envoy › ext_proc is headers-only, fail-closed, overridable, and tells its direction", (t) => {
  const config = envoyConfig();
  for (const [name, direction, inbound] of [["inbound_8080", "inbound", "8080"], ["outbound_payments", "outbound", undefined]] as const) {
    const ep = httpFilter(listener(config, name), "envoy.filters.http.ext_proc");
    t.is(ep.failure_mode_allow, false, name);
    t.is(ep.allow_mode_override, true, name);
    t.like(ep.processing_mode, { request_header_mode: "SEND", response_header_mode: "SEND", request_body_mode: "NONE", response_body_mode: "NONE" }, name);
    const inboundName = inbound === undefined ? [] : [{ key: INBOUND_METADATA_KEY, value: inbound }];
    t.deepEqual(ep.grpc_service.initial_metadata, [{ key: DIRECTION_METADATA_KEY, value: direction }, ...inboundName], name);
    t.is(ep.grpc_service.envoy_grpc.cluster_name, "meshext_sidecar", name);
  }
});

test("envoy › ext_proc message_timeout equals the sidecar's --message-timeout default and max_message_timeout is set", (t) => {
  const config = envoyConfig();
  for (const name of ["inbound_8080", "outbound_payments"]) {
    const ep = httpFilter(listener(config, name), "envoy.filters.http.ext_proc");
    t.is(durationMs(ep.message_timeout), flagDefault<number>("messageTimeoutMs"), name);
    t.true(durationMs(ep.max_message_timeout) > durationMs(ep.message_timeout), `${name}: max_message_timeout must allow long fault delays`);
  }
});

test("envoy › the ext_proc cluster speaks HTTP/2 and is health-checked with grpc.health.v1 for the ExternalProcessor", (t) => {
  const sidecar = clusters(envoyConfig()).get("meshext_sidecar");
  const options = sidecar.typed_extension_protocol_options["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"];
  t.truthy(options.explicit_http_config.http2_protocol_options);
  t.is(sidecar.health_checks[0].grpc_health_check.service_name, EXT_PROC_SERVICE_NAME);
});

test("envoy › admin is on loopback and the graceful ext_proc close runtime guard is on", (t) => {
  const config = envoyConfig();
  t.regex(config.admin.address.socket_address.address, /^127\./);
  const layer = config.layered_runtime.layers.find((l: { static_layer?: object }) => l.static_layer).static_layer;
  t.is(layer["envoy.reloadable_features.ext_proc_graceful_grpc_close"], true);
});

test("envoy › client certificate URI SANs are forwarded to ext_proc in x-forwarded-client-cert", (t) => {
  const inbound = hcm(listener(envoyConfig(), "inbound_8080"));
  t.true(["SANITIZE_SET", "APPEND_FORWARD"].includes(inbound.forward_client_cert_details));
  t.is(inbound.set_current_client_cert_details.uri, true);
});

test("envoy › the wasm file is asconfig.json's release outFile", (t) => {
  const asconfig = JSON.parse(readFileSync(join(ROOT, "asconfig.json"), "utf8"));
  const wasm = httpFilter(listener(envoyConfig(), "inbound_8080"), "envoy.filters.http.wasm");
  t.is(wasm.config.vm_config.code.local.filename, asconfig.targets.release.outFile);
});

test("envoy › stats_tags turn the wasm poll-error name suffix into a reason label", (t) => {
  // Envoy's tag extractor: the first capture group is removed from the name, the second is the value.
  const tags = envoyConfig().stats_config.stats_tags as Array<{ tag_name: string; regex: string }>;
  const reason = tags.find((tag) => tag.tag_name === "reason");
  t.truthy(reason);
  for (const r of [CONTRACT.pollErrorDispatch, CONTRACT.pollErrorReset, CONTRACT.pollErrorStatus, CONTRACT.pollErrorMalformed]) {
    const name = `wasmcustom.${CONTRACT.metricPollErrors}${CONTRACT.metricReasonLabel}${r}`;
    const m = new RegExp(reason!.regex).exec(name);
    t.truthy(m, name);
    t.is(name.replace(m![1]!, ""), `wasmcustom.${CONTRACT.metricPollErrors}`);
    t.is(m![2], r);
  }
  t.is(new RegExp(reason!.regex).exec(`wasmcustom.${CONTRACT.metricCloseResponses}`), null, "other wasm metrics keep their names");
});
