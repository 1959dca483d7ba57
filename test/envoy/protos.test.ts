// envoy/envoy.yaml decoded against Envoy's own protos (grpc-js-xds deps) as Envoy's strict loader would:
// unknown fields, unresolved @types, bad Durations and enum names are errors, each reported with its path.
import test from "ava";
import { walkMessage } from "../helpers/envoy-proto-walk.js";
import { ENVOY_CONFIGS, envoyConfig, readYaml } from "./envoy-config.js";

const BOOTSTRAP = "envoy.config.bootstrap.v3.Bootstrap";

for (const file of ENVOY_CONFIGS) {
  const name = file.split("/").pop()!;
  test(`envoy › ${name} decodes as a Bootstrap with no unknown field, unresolved type or deprecated field`, (t) => {
    const result = walkMessage(readYaml(file), BOOTSTRAP);
    t.deepEqual(result.problems, [], result.problems.map((p) => `${p.path}: ${p.message}`).join("\n"));
    t.deepEqual(result.deprecated, []);
  });
}

test("envoy › the proto walk flags the wasm filter's deprecated fail_open (Envoy 1.37's wasm.proto)", (t) => {
  const config = envoyConfig();
  const wasm = config.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters
    .find((f: { name: string }) => f.name === "envoy.filters.http.wasm").typed_config.config;
  delete wasm.failure_policy;
  wasm.fail_open = true;
  t.deepEqual(walkMessage(config, BOOTSTRAP).deprecated.map((p) => p.split(".").pop()), ["fail_open"]);
});

test("envoy › every typed_config in envoy.yaml resolves to a type, the wasm filter's included", (t) => {
  const types = new Set(walkMessage(envoyConfig(), BOOTSTRAP).anyTypes.map((a) => a.type));
  for (const expected of [
    "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
    "envoy.extensions.filters.http.lua.v3.Lua",
    "envoy.extensions.filters.http.wasm.v3.Wasm",
    "envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor",
    "envoy.extensions.filters.http.router.v3.Router",
    "envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
    "google.protobuf.StringValue",
  ]) {
    t.true(types.has(expected), `${expected} was not resolved (resolved: ${[...types].join(", ")})`);
  }
});

test("envoy › the proto walk reports misspelt fields, unknown @types, bad durations and enum names with their paths", (t) => {
  // Given envoy.yaml with four mistakes Envoy would reject
  const config = envoyConfig();
  const filters = config.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.http_filters;
  const extProc = filters.find((f: { name: string }) => f.name === "envoy.filters.http.ext_proc").typed_config;
  extProc.message_timout = "0.2s";
  extProc.max_message_timeout = "5 seconds";
  extProc.processing_mode.response_body_mode = "STREAMING";
  filters[0].typed_config["@type"] = "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Luaa";
  // When it is walked
  const problems = walkMessage(config, BOOTSTRAP).problems;
  // Then each mistake is reported at its path
  const at = (suffix: string) => problems.find((p) => p.path.endsWith(suffix));
  t.regex(at("http_filters[2].typed_config.message_timout")?.message ?? "", /unknown field of envoy\.extensions\.filters\.http\.ext_proc\.v3\.ExternalProcessor/);
  t.regex(at("http_filters[2].typed_config.max_message_timeout")?.message ?? "", /Duration/);
  t.regex(at("processing_mode.response_body_mode")?.message ?? "", /enum BodySendMode/);
  t.regex(at("http_filters[0].typed_config.@type")?.message ?? "", /unresolved type/);
  t.is(problems.length, 4, problems.map((p) => `${p.path}: ${p.message}`).join("\n"));
});

test("envoy › the proto walk enforces oneofs and PGV required fields", (t) => {
  // Given a route match without a path specifier and a cluster address with two oneof members
  const config = envoyConfig();
  const vh = config.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0];
  delete vh.routes[0].match.prefix;
  config.static_resources.clusters[0].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.pipe = { path: "/tmp/x" };
  const problems = walkMessage(config, BOOTSTRAP).problems.map((p) => `${p.path}: ${p.message}`);
  t.true(problems.some((p) => /routes\[0\]\.match: oneof path_specifier: one of .* is required/.test(p)), problems.join("\n"));
  t.true(problems.some((p) => /endpoint\.address: oneof address: only one of socket_address, pipe may be set/.test(p)), problems.join("\n"));
});
