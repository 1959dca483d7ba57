// The clusters of a generated bootstrap: each inbound's app, each outbound's upstream, the sidecar's gRPC and admin
// servers, and Envoy's own admin for the stats listener.
import { commented } from "./commented.js";
import { appClusterName, CLUSTER, outboundClusterName } from "./names.js";
import { socketAddress, type BootstrapOptions, type HostPort } from "./options.js";

function staticCluster(name: string, address: HostPort | { socketPath: string }, connectTimeout = "1s") {
  const endpoint = "socketPath" in address ? { pipe: { path: address.socketPath } } : socketAddress(address);
  return { name, type: "STATIC", connect_timeout: connectTimeout, load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: { address: endpoint } }] }] } };
}

function sidecarGrpcCluster(o: BootstrapOptions) {
  return commented(
    {
      ...staticCluster(CLUSTER.sidecarGrpc, o.sidecarGrpc),
      typed_extension_protocol_options: {
        "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
          "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
          explicit_http_config: commented(
            { http2_protocol_options: { connection_keepalive: { interval: "30s", timeout: "5s" } } },
            { http2_protocol_options: "gRPC needs HTTP/2. Its PINGs notice a dead sidecar connection in seconds instead of TCP's minutes." },
          ),
        },
      },
      health_checks: [
        { timeout: "1s", interval: "2s", no_traffic_interval: "2s", unhealthy_threshold: 2, healthy_threshold: 1, grpc_health_check: { service_name: "envoy.service.ext_proc.v3.ExternalProcessor" } },
      ],
      common_lb_config: { healthy_panic_threshold: { value: 100 } },
    },
    {
      ".": "The sidecar's ext_proc gRPC server (--grpc-listen, or --grpc-socket).",
      health_checks: "grpc.health.v1: the sidecar reports NOT_SERVING from the first drain step (cluster.meshext_sidecar.health_check.*).",
      common_lb_config:
        "...but a draining sidecar must go on deciding the requests Envoy still serves, and it is the only endpoint: a panic\n" +
        "threshold of 100% keeps routing to it whatever its health (and before the first check).",
    },
  );
}

export function clusters(o: BootstrapOptions) {
  return [
    ...o.inbounds.map((ib) => commented(staticCluster(appClusterName(ib), ib.app), { ".": `The app behind inbound ${ib.name}.` })),
    ...o.outbounds.map((ob) => commented(staticCluster(outboundClusterName(ob), ob.upstream), { ".": `Where outbound ${ob.service} goes.` })),
    sidecarGrpcCluster(o),
    commented(staticCluster(CLUSTER.sidecarAdmin, o.sidecarAdmin, "0.5s"), { ".": "The sidecar's admin HTTP server (--admin-listen): the wasm filter polls GET /drain here." }),
    ...(o.stats ? [commented(staticCluster(CLUSTER.envoyAdmin, o.admin, "0.5s"), { ".": "Envoy's own admin, for the stats listener's two read-only paths." })] : []),
  ];
}
