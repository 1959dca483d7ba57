// The listeners of a generated bootstrap: one per Dataplane inbound (drain shim, wasm filter, ext_proc, router to
// the app), one per outbound (ext_proc, router to the upstream), and the Prometheus stats listener.
import { commented } from "./commented.js";
import { extProcFilter, luaShim, routerFilter, wasmDrainFilter } from "./http-filters.js";
import { appClusterName, CLUSTER, inboundListenerName, outboundClusterName, outboundListenerName, STATS_LISTENER } from "./names.js";
import { BOOTSTRAP_DEFAULTS, socketAddress, type BootstrapOptions, type HostPort, type InboundListener, type OutboundListener } from "./options.js";

const HCM_TYPE = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";

function route(name: string, cluster: string) {
  return {
    name,
    virtual_hosts: [{ name, domains: ["*"], routes: [{ match: { prefix: "/" }, route: { cluster, timeout: `${BOOTSTRAP_DEFAULTS.routeTimeoutS}s` } }] }],
  };
}

function downstreamTls(o: BootstrapOptions) {
  const tls = o.tls!;
  return {
    name: "envoy.transport_sockets.tls",
    typed_config: commented(
      {
        "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext",
        require_client_certificate: true,
        common_tls_context: commented(
          {
            alpn_protocols: ["h2", "http/1.1"],
            tls_certificates: [{ certificate_chain: { filename: tls.certChain }, private_key: { filename: tls.privateKey } }],
            validation_context: { trusted_ca: { filename: tls.trustedCa } },
          },
          { alpn_protocols: "Without ALPN a TLS client cannot negotiate HTTP/2: codec AUTO then sees only HTTP/1.1 over TLS." },
        ),
      },
      { require_client_certificate: "No certificate, no connection: every request then carries a verified identity." },
    ),
  };
}

export function inboundListener(o: BootstrapOptions, ib: InboundListener) {
  const hcm = commented(
    {
      "@type": HCM_TYPE,
      stat_prefix: o.inboundStatPrefix,
      codec_type: "AUTO",
      drain_timeout: `${BOOTSTRAP_DEFAULTS.drainTimeoutS}s`,
      common_http_protocol_options: { idle_timeout: `${BOOTSTRAP_DEFAULTS.idleTimeoutS}s` },
      forward_client_cert_details: "SANITIZE_SET",
      set_current_client_cert_details: { uri: true },
      route_config: route(inboundListenerName(ib), appClusterName(ib)),
      http_filters: [luaShim(), wasmDrainFilter(o), extProcFilter(o, "inbound", ib.name), routerFilter()],
    },
    {
      stat_prefix: "= the sidecar's --inbound-stat-prefix, shared by every inbound: the drain reads http.<prefix>.downstream_rq_active\nto leave as soon as no request is in flight.",
      codec_type: o.tls ? "HTTP/1.1 and HTTP/2 (ALPN) over TLS." : "HTTP/1.1 and h2c (prior knowledge) on the same port.",
      drain_timeout: "Gap between the HTTP/2 GOAWAY notice and the final GOAWAY while draining (Envoy's default, spelled out).",
      common_http_protocol_options: "The only bound on idle keep-alive connections during a drain (Envoy does not close idle connections when a\ndrain starts; envoyproxy/envoy#42305).",
      forward_client_cert_details:
        "A client-supplied x-forwarded-client-cert never reaches the sidecar: without TLS SANITIZE_SET strips it, with mTLS\n" +
        "Envoy replaces it with one carrying the verified peer's URI SANs.",
    },
  );
  return commented(
    {
      name: inboundListenerName(ib),
      address: socketAddress(ib.listen),
      traffic_direction: "INBOUND",
      filter_chains: [{ ...(o.tls ? { transport_socket: downstreamTls(o) } : {}), filters: [{ name: "envoy.filters.network.http_connection_manager", typed_config: hcm }] }],
    },
    {
      ".": `Dataplane inbound ${ib.name}: ${ib.listen.port} → the app on ${ib.app.host}:${ib.app.port}.`,
      traffic_direction:
        "`POST /drain_listeners?inboundonly` (the sidecar's --drain-listeners) stops only INBOUND listeners. drain_type\n" +
        "stays DEFAULT: this listener drains on /healthcheck/fail too.",
    },
  );
}

export function outboundListener(o: BootstrapOptions, ob: OutboundListener) {
  return commented(
    {
      name: outboundListenerName(ob),
      address: socketAddress(ob.listen),
      traffic_direction: "OUTBOUND",
      drain_type: "MODIFY_ONLY",
      filter_chains: [
        {
          filters: [
            {
              name: "envoy.filters.network.http_connection_manager",
              typed_config: {
                "@type": HCM_TYPE,
                stat_prefix: outboundListenerName(ob),
                route_config: route(outboundListenerName(ob), outboundClusterName(ob)),
                http_filters: [extProcFilter(o, "outbound"), routerFilter()],
              },
            },
          ],
        },
      ],
    },
    {
      ".": `Outbound to ${ob.service}: the app calls ${ob.listen.host}:${ob.listen.port}; the sidecar applies MeshHTTPRoute \`to\` rules as header edits.`,
      drain_type:
        "/healthcheck/fail drain-closes every DEFAULT listener: the app's own keep-alive calls would be closed on every\n" +
        "response while the sidecar drains. MODIFY_ONLY drains this one only on listener changes and hot restart.",
    },
  );
}

/** Serves Envoy's /stats/prometheus and /ready from the admin, and the sidecar's /metrics; everything else is 404. */
export function statsListener(o: BootstrapOptions, at: HostPort) {
  const exact = (path: string, cluster: string) => ({ match: { path }, route: { cluster } });
  return commented(
    {
      name: STATS_LISTENER,
      address: socketAddress(at),
      drain_type: "MODIFY_ONLY",
      filter_chains: [
        {
          filters: [
            {
              name: "envoy.filters.network.http_connection_manager",
              typed_config: {
                "@type": HCM_TYPE,
                stat_prefix: STATS_LISTENER,
                route_config: {
                  name: STATS_LISTENER,
                  virtual_hosts: [
                    {
                      name: STATS_LISTENER,
                      domains: ["*"],
                      routes: [
                        exact("/stats/prometheus", CLUSTER.envoyAdmin),
                        exact("/ready", CLUSTER.envoyAdmin),
                        exact("/metrics", CLUSTER.sidecarAdmin),
                        { match: { prefix: "/" }, direct_response: { status: 404, body: { inline_string: "only /stats/prometheus, /ready and /metrics are served here\n" } } },
                      ],
                    },
                  ],
                },
                http_filters: [routerFilter()],
              },
            },
          ],
        },
      ],
    },
    {
      ".":
        "For Prometheus: Envoy's /stats/prometheus and /ready (from the loopback admin) and the sidecar's /metrics, matched by\n" +
        "exact path. No other admin path is reachable through it.",
      drain_type: "Scrapes go on while the sidecar drains: neither /healthcheck/fail nor /drain_listeners?inboundonly (its direction is\nunset) closes this listener.",
    },
  );
}
