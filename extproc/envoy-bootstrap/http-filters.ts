// The HTTP filters of a generated bootstrap: the Lua close shim, the wasm drain filter and ext_proc to the sidecar.
import { commented } from "./commented.js";
import { CLUSTER } from "./names.js";
import { BOOTSTRAP_DEFAULTS, formatHostPort, type BootstrapOptions } from "./options.js";

/** The sidecar reads this initial metadata to tell inbound (`from`) from outbound (`to`) decisions. */
const DIRECTION_KEY = "x-meshext-direction";

const seconds = (ms: number) => `${ms / 1000}s`;

/**
 * Asks Envoy to close the connection after a response the wasm filter marked with its private `x-meshext-close`
 * header, and removes the marker. A `connection: close` set by a filter alone never reaches the client: Envoy
 * strips hop-by-hop headers after the filter chain (source/common/http/conn_manager_utility.cc,
 * mutateResponseHeaders). drainConnectionUponCompletion() (Lua API, Envoy >= 1.37) makes Envoy send
 * `Connection: close` itself on HTTP/1.x and GOAWAY on HTTP/2 and 3.
 */
export const LUA_CLOSE_SHIM = `function envoy_on_response(response_handle)
  local headers = response_handle:headers()
  if headers:get("x-meshext-close") ~= nil then
    headers:remove("x-meshext-close")
    response_handle:streamInfo():drainConnectionUponCompletion()
  end
end
`;

export function luaShim() {
  return commented(
    {
      name: "envoy.filters.http.lua",
      typed_config: {
        "@type": "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua",
        default_source_code: { inline_string: LUA_CLOSE_SHIM },
      },
    },
    {
      ".":
        "Decode order is as listed; encode (response) order is the reverse. The Lua shim is listed BEFORE the wasm filter\n" +
        "so that it sees the response AFTER the wasm filter marked it with its private `x-meshext-close` header (while\n" +
        "draining, any protocol, following the close ramp). It acts on that marker only and removes it: reading\n" +
        "`connection` instead would close clients whenever the app closes its own keep-alive. drainConnectionUponCompletion()\n" +
        "(Envoy >= 1.37) makes Envoy send `Connection: close` on HTTP/1.x and GOAWAY on HTTP/2; a `connection: close` set by\n" +
        "a filter alone is stripped with the other hop-by-hop headers (Envoy conn_manager_utility.cc, mutateResponseHeaders).",
    },
  );
}

/** The wasm filter's plugin configuration (wasm/config.ts parses it; unknown fields fail Envoy's start). */
export function wasmPluginConfig(o: Pick<BootstrapOptions, "sidecarAdmin">): string {
  const config = {
    poll: { cluster: CLUSTER.sidecarAdmin, path: "/drain", authority: formatHostPort(o.sidecarAdmin), periodMs: BOOTSTRAP_DEFAULTS.pollPeriodMs, timeoutMs: BOOTSTRAP_DEFAULTS.pollTimeoutMs },
    health: { path: "/meshext/health", answerWhenServing: true },
    drainingHeader: "x-meshext-draining",
    closeHeader: "x-meshext-close",
  };
  return JSON.stringify(config, null, 2) + "\n";
}

export function wasmDrainFilter(o: BootstrapOptions) {
  return {
    name: "envoy.filters.http.wasm",
    typed_config: {
      "@type": "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm",
      config: commented(
        {
          name: "meshext_drain",
          failure_policy: "FAIL_OPEN",
          vm_config: commented(
            { vm_id: "meshext_drain", runtime: "envoy.wasm.runtime.v8", code: { local: { filename: o.wasmPath } } },
            { vm_id: "One VM per worker, shared by every listener using this id." },
          ),
          configuration: { "@type": "type.googleapis.com/google.protobuf.StringValue", value: wasmPluginConfig(o) },
        },
        {
          failure_policy:
            "A VM that fails at run time (a trap) must never block traffic: its requests then pass unfiltered, and the\n" +
            "drain falls back on Envoy's own (health check failed: Connection: close and GOAWAY on every response).\n" +
            "FAIL_RELOAD would restart the VM instead, at the cost of the requests in flight during the reload.\n" +
            "Start-up is not covered: a plugin configuration on_configure rejects stops Envoy from starting.",
          configuration: "Plugin configuration (wasm/config.ts): the filter polls the sidecar's GET /drain through meshext_sidecar_admin.",
        },
      ),
    },
  };
}

export function extProcFilter(o: BootstrapOptions, direction: "inbound" | "outbound", inboundName?: string) {
  const metadata = [{ key: DIRECTION_KEY, value: direction }, ...(inboundName !== undefined ? [{ key: "x-meshext-inbound", value: inboundName }] : [])];
  return {
    name: "envoy.filters.http.ext_proc",
    typed_config: commented(
      {
        "@type": "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor",
        grpc_service: { envoy_grpc: { cluster_name: CLUSTER.sidecarGrpc }, initial_metadata: metadata },
        failure_mode_allow: false,
        ...(direction === "inbound" ? { request_attributes: ["connection.uri_san_peer_certificate", "connection.requested_server_name"] } : {}),
        mutation_rules: { allow_expression: { regex: "host|:authority" } },
        processing_mode: {
          request_header_mode: "SEND",
          response_header_mode: "SEND",
          request_body_mode: "NONE",
          response_body_mode: "NONE",
          request_trailer_mode: "SKIP",
          response_trailer_mode: "SKIP",
        },
        allow_mode_override: true,
        message_timeout: seconds(o.messageTimeoutMs),
        max_message_timeout: seconds(o.maxMessageTimeoutMs),
      },
      {
        grpc_service: "The sidecar decides inbound (`from`) and outbound (`to`) rules, and each inbound's own: the metadata says which.",
        failure_mode_allow: "Fail closed: a policy service that is down must not turn into \"allow everyone\".",
        ...(direction === "inbound"
          ? {
              request_attributes:
                "The peer certificate's first URI SAN (spiffe://<trust domain>/..., kuma://<tag>/<value>): the client identity for\n" +
                "MeshTrafficPermission. Envoy sends only the attributes listed (Envoy docs, \"Attributes\"); empty without TLS.",
            }
          : {}),
        mutation_rules:
          "Envoy drops ext_proc edits to host/:authority, :method, :scheme and any header starting x-envoy unless allowed,\n" +
          "counting them only in rejected_header_mutations. MeshHTTPRoute URLRewrite `hostname` needs host/:authority. The\n" +
          "sidecar knows these rules (extproc/envoy-mutation-rules.ts) and reports the edits they drop.",
        processing_mode: "Headers only. The sidecar answers request_headers with mode_override {response_header_mode: SKIP} when no response edit is needed.",
        message_timeout: "Per-message budget (= the sidecar's --message-timeout). Longer MeshFaultInjection delays send\noverride_message_timeout first, honoured up to max_message_timeout (= --max-message-timeout).",
      },
    ),
  };
}

export function routerFilter() {
  return { name: "envoy.filters.http.router", typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router" } };
}
