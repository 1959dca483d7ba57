// BootstrapOptions from the flags of `meshext run` / `meshext up`: the sidecar's addresses, the Dataplane's
// networking (or --inbound-port/--app-port without one), the upstreams of its outbounds and the mTLS files.
import type { EnvoyConfig } from "../config/envoy.js";
import { ConfigError } from "../config/flags.js";
import type { SidecarConfig } from "../config/sidecar.js";
import { splitHostPort } from "../host-port.js";
import type { DataplaneNetworking } from "./dataplane-networking.js";
import { BOOTSTRAP_DEFAULTS, type BootstrapOptions, type HostPort } from "./options.js";

/** --outbound-upstreams "payments=127.0.0.1:8081,orders=10.0.0.5:80" as service → address. */
export function parseOutboundUpstreams(text: string): Map<string, HostPort> {
  const out = new Map<string, HostPort>();
  for (const item of text.split(",").map((s) => s.trim()).filter(Boolean)) {
    const m = /^([A-Za-z0-9_.-]+)=(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(item);
    if (!m || Number(m[3]) > 65535) throw new ConfigError(`--outbound-upstreams: ${JSON.stringify(item)} is not SERVICE=HOST:PORT`);
    out.set(m[1]!, { host: m[2]!.replace(/^\[|\]$/g, ""), port: Number(m[3]) });
  }
  return out;
}

export interface SidecarAddresses {
  /** Where the sidecar's gRPC and admin servers listen (after binding: real ports). */
  grpc: string;
  admin: string;
}

/** Loopback for the clusters when the sidecar binds a wildcard address. */
function reachable(address: string): HostPort {
  const a = splitHostPort(address);
  return { host: a.host === "0.0.0.0" || a.host === "" ? "127.0.0.1" : a.host === "::" ? "::1" : a.host, port: a.port };
}

export function bootstrapOptions(
  sidecar: SidecarConfig,
  envoy: EnvoyConfig,
  networking: DataplaneNetworking | undefined,
  addresses: SidecarAddresses,
  node: { id: string; cluster: string },
  wasmPath: string,
): BootstrapOptions {
  const net: DataplaneNetworking = networking ?? {
    inbounds: [{ name: String(envoy.inboundPort), port: envoy.inboundPort, servicePort: envoy.appPort, serviceAddress: BOOTSTRAP_DEFAULTS.appHost }],
    outbounds: [],
  };
  const upstreams = parseOutboundUpstreams(envoy.outboundUpstreams);
  const outbounds = net.outbounds.map((ob) => {
    const upstream = upstreams.get(ob.service);
    if (!upstream) throw new ConfigError(`Dataplane outbound ${ob.service} (port ${ob.port}) has no upstream: give --outbound-upstreams ${ob.service}=HOST:PORT`);
    return { service: ob.service, listen: { host: ob.address, port: ob.port }, upstream };
  });
  for (const service of upstreams.keys()) {
    if (!net.outbounds.some((ob) => ob.service === service)) throw new ConfigError(`--outbound-upstreams names ${service}, which is no outbound of the Dataplane`);
  }
  return {
    node,
    admin: splitHostPort(envoy.envoyAdminListen),
    ...(envoy.envoyStatsListen ? { stats: splitHostPort(envoy.envoyStatsListen) } : {}),
    inbounds: net.inbounds.map((ib) => ({ name: ib.name, listen: { host: envoy.inboundListenHost, port: ib.port }, app: { host: ib.serviceAddress, port: ib.servicePort } })),
    outbounds,
    sidecarGrpc: sidecar.grpcSocket ? { socketPath: sidecar.grpcSocket } : reachable(addresses.grpc),
    sidecarAdmin: reachable(addresses.admin),
    wasmPath,
    messageTimeoutMs: sidecar.messageTimeoutMs,
    maxMessageTimeoutMs: sidecar.maxMessageTimeoutMs,
    inboundStatPrefix: sidecar.inboundStatPrefix,
    ...(envoy.tlsCert ? { tls: { certChain: envoy.tlsCert, privateKey: envoy.tlsKey, trustedCa: envoy.tlsCa } } : {}),
  };
}
