// What a real Envoy 1.37 does with the shipped configs (envoy/envoy.yaml and its mTLS variant) that a looser
// reading would miss: listener direction and drain type, what the Lua shim reacts to, current wasm field names,
// ext_proc mutation_rules and request_attributes. Each check names the Envoy behaviour it stands for.
import test from "ava";
import { STATS_LISTENER } from "../../extproc/envoy-bootstrap/names.js";
import { REQUEST_ATTRIBUTES } from "../../extproc/transport/mapping.js";
import { fromEnvoyMutationRules, SHIPPED_MUTATION_RULES } from "../../extproc/envoy-mutation-rules.js";
import { ProxyWasmHost } from "../helpers/proxy-wasm-host.js";
import { CONTRACT, FILTER_WASM } from "../wasm/fixtures.js";
import { ENVOY_CONFIGS, hcm, httpFilter, httpFilters, readYaml, type Yaml } from "./envoy-config.js";

const listeners = (config: Yaml): Yaml[] => config.static_resources.listeners;
const extProcFilters = (config: Yaml): Array<{ listener: string; filter: Yaml }> =>
  listeners(config).flatMap((l) => httpFilters(l).filter((f) => f.name === "envoy.filters.http.ext_proc").map((f) => ({ listener: l.name as string, filter: f.typed_config })));
const wasmPlugin = (config: Yaml): Yaml => httpFilter(listeners(config).find((l) => l.name === "inbound_8080"), "envoy.filters.http.wasm").config;
const luaSource = (config: Yaml): string =>
  httpFilter(listeners(config).find((l) => l.name === "inbound_8080"), "envoy.filters.http.lua").default_source_code.inline_string;

for (const file of ENVOY_CONFIGS) {
  const name = file.split("/").pop()!;

  test(`envoy fidelity › ${name}: every listener says whether it is INBOUND or OUTBOUND`, (t) => {
    // Envoy: /drain_listeners?inboundonly stops only listeners with traffic_direction INBOUND (UNSPECIFIED is neither).
    for (const l of listeners(readYaml(file))) {
      if (l.name === STATS_LISTENER) {
        // The Prometheus listener is neither, on purpose: scrapes go on while /drain_listeners?inboundonly stops traffic.
        t.is(l.traffic_direction, undefined, l.name);
        continue;
      }
      t.true(["INBOUND", "OUTBOUND"].includes(l.traffic_direction), `${l.name}: traffic_direction ${l.traffic_direction ?? "unset (UNSPECIFIED)"}`);
      t.is(l.traffic_direction, l.name.startsWith("outbound") ? "OUTBOUND" : "INBOUND", l.name);
    }
  });

  test(`envoy fidelity › ${name}: outbound listeners are MODIFY_ONLY, so /healthcheck/fail does not drain the app's own calls`, (t) => {
    // Envoy: while health checks fail, drainClose() is true for every DEFAULT-drain-type listener, outbound included.
    for (const l of listeners(readYaml(file))) {
      if (l.name.startsWith("outbound") || l.name === STATS_LISTENER) t.is(l.drain_type, "MODIFY_ONLY", l.name);
      else t.not(l.drain_type, "MODIFY_ONLY", `${l.name}: inbound must drain on /healthcheck/fail`);
    }
  });

  test(`envoy fidelity › ${name}: the Lua shim drains on the wasm filter's private marker only, and removes it`, (t) => {
    // Envoy: encoder filters see the upstream's own Connection header (stripped only after the filter chain).
    const lua = luaSource(readYaml(file));
    const plugin = JSON.parse(wasmPlugin(readYaml(file)).configuration.value);
    const marker = plugin.closeHeader ?? CONTRACT.closeHeader;
    t.truthy(marker, "the plugin configuration names no close marker");
    t.true(lua.includes(`get("${marker}")`), `the shim does not test ${marker}`);
    t.true(lua.includes(`remove("${marker}")`), `the shim does not remove ${marker}`);
    t.regex(lua, /drainConnectionUponCompletion\(\)/);
    t.notRegex(lua, /["']connection["']/i, "the shim must not read the Connection header");
    t.notRegex(lua, /envoy_on_request/, "the shim has no business on the request path");
  });

  test(`envoy fidelity › ${name}: the wasm filter uses failure_policy FAIL_OPEN, not the deprecated fail_open`, (t) => {
    // Envoy >= 1.29: PluginConfig.fail_open is deprecated in favour of failure_policy.
    const plugin = wasmPlugin(readYaml(file));
    t.is(plugin.failure_policy, "FAIL_OPEN");
    t.false("fail_open" in plugin);
  });

  test(`envoy fidelity › ${name}: the exact plugin configuration string configures the built module`, (t) => {
    // Envoy: a plugin whose on_configure returns false at startup fails the listener, whatever the failure policy.
    const host = ProxyWasmHost.load(FILTER_WASM);
    t.true(host.startPlugin(wasmPlugin(readYaml(file)).configuration.value), host.logs("critical").join(" | "));
  });

  test(`envoy fidelity › ${name}: every ext_proc filter's mutation_rules are the ones the sidecar reports against`, (t) => {
    // Envoy: without mutation_rules, ext_proc edits to host/:authority, :scheme, :method and x-envoy-* are silently dropped.
    for (const { listener, filter } of extProcFilters(readYaml(file))) {
      t.truthy(filter.mutation_rules, `${listener}: no mutation_rules`);
      t.deepEqual(fromEnvoyMutationRules(filter.mutation_rules ?? {}), SHIPPED_MUTATION_RULES, listener);
    }
  });

  test(`envoy fidelity › ${name}: inbound ext_proc asks for the attributes the sidecar reads`, (t) => {
    // Envoy: ext_proc sends only the attributes listed in request_attributes (none by default).
    const inbound = extProcFilters(readYaml(file)).filter((f) => f.listener === "inbound_8080");
    t.is(inbound.length, 1);
    for (const { listener, filter } of inbound) t.deepEqual([...(filter.request_attributes ?? [])].sort(), [...REQUEST_ATTRIBUTES].sort(), listener);
  });
}

test("envoy fidelity › the mTLS variant is envoy.yaml plus a client-certificate-requiring TLS context on the inbound listener", (t) => {
  // Envoy: connection.uri_san_peer_certificate is empty unless the downstream connection is TLS with a peer certificate.
  const [plain, mtls] = ENVOY_CONFIGS.map(readYaml);
  const inbound = listeners(mtls).find((l) => l.name === "inbound_8080");
  const socket = inbound.filter_chains[0].transport_socket;
  t.is(socket?.name, "envoy.transport_sockets.tls");
  const tls = socket.typed_config;
  t.is(tls["@type"], "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext");
  t.is(tls.require_client_certificate, true);
  t.truthy(tls.common_tls_context.validation_context.trusted_ca.filename, "peers are verified against a CA");
  t.is(hcm(inbound).forward_client_cert_details, "SANITIZE_SET");
  // Apart from that socket the two files are the same configuration.
  delete inbound.filter_chains[0].transport_socket;
  t.deepEqual(mtls, plain);
});
