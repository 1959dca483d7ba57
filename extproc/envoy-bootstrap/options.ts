// What an Envoy bootstrap is generated from: the sidecar's addresses, the dataplane's inbounds and outbounds, the
// wasm module, and optional mTLS files. One place for the generator's defaults.

/** A TCP address (host without brackets). */
export interface HostPort {
  host: string;
  port: number;
}

/** One Dataplane inbound: Envoy listens on `listen` and routes to the app on `app`. */
export interface InboundListener {
  /** The Dataplane's inbound name, or its port as text; the sidecar picks the inbound by it. */
  name: string;
  listen: HostPort;
  app: HostPort;
}

/** One outbound: the app calls `listen` on loopback and Envoy forwards to `upstream`. */
export interface OutboundListener {
  /** The destination service (kuma.io/service), named in stats and clusters. */
  service: string;
  listen: HostPort;
  upstream: HostPort;
}

export interface TlsFiles {
  certChain: string;
  privateKey: string;
  trustedCa: string;
}

export interface BootstrapOptions {
  node: { id: string; cluster: string };
  /** Envoy's admin: loopback only (/healthcheck/fail, /drain_listeners and /quitquitquit must not be reachable). */
  admin: HostPort;
  /** A listener that serves only Envoy's /stats/prometheus (and the sidecar's /metrics), or none. */
  stats?: HostPort;
  inbounds: InboundListener[];
  outbounds: OutboundListener[];
  /** The sidecar's ext_proc gRPC server: an address, or a Unix socket path. */
  sidecarGrpc: HostPort | { socketPath: string };
  /** The sidecar's admin HTTP server, which the wasm filter polls for the drain state. */
  sidecarAdmin: HostPort;
  /** Path of the drain filter's .wasm as Envoy should open it. */
  wasmPath: string;
  /** ext_proc message_timeout and max_message_timeout, ms (= the sidecar's --message-timeout / --max-message-timeout). */
  messageTimeoutMs: number;
  maxMessageTimeoutMs: number;
  /** Inbound mTLS: the listener requires a client certificate signed by trustedCa. */
  tls?: TlsFiles;
  /** The inbound HTTP connection managers' stat_prefix (= the sidecar's --inbound-stat-prefix). */
  inboundStatPrefix: string;
}

export const BOOTSTRAP_DEFAULTS = {
  admin: { host: "127.0.0.1", port: 9901 },
  stats: { host: "0.0.0.0", port: 9903 },
  /** Where inbound listeners bind when the Dataplane names no address to listen on. */
  inboundHost: "0.0.0.0",
  /** Where the app listens when the Dataplane names no serviceAddress. */
  appHost: "127.0.0.1",
  /** The one inbound of a sidecar without --dataplane-file: listen port → app port. */
  inboundPort: 8080,
  appPort: 8081,
  /** The wasm filter's plugin configuration (wasm/config.ts): poll period and timeout, ms. */
  pollPeriodMs: 1000,
  pollTimeoutMs: 500,
  /** Gap between the HTTP/2 GOAWAY notice and the final GOAWAY while draining (Envoy's default, spelled out). */
  drainTimeoutS: 5,
  /** Idle keep-alive bound: the only one on idle connections during a drain (envoyproxy/envoy#42305). */
  idleTimeoutS: 30,
  /** Route timeout towards the app and outbound upstreams. */
  routeTimeoutS: 15,
} as const;

/** "host:port" with IPv6 hosts bracketed. */
export function formatHostPort(a: HostPort): string {
  return a.host.includes(":") ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

/** The Envoy address message of a HostPort. */
export const socketAddress = (a: HostPort) => ({ socket_address: { address: a.host, port_value: a.port } });
