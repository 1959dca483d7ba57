// Settings of the Envoy that `meshext run` and `meshext up` start on a generated bootstrap: one table of flags with
// their defaults (beside the sidecar's, which say where the sidecar listens and which Dataplane it serves).
import { BOOTSTRAP_DEFAULTS, formatHostPort } from "../envoy-bootstrap/options.js";
import { ConfigError, type FlagSpec, type FlagValues } from "./flags.js";

export const ENVOY_FLAGS = [
  { key: "envoyAdminListen", flag: "envoy-admin-listen", type: "hostport", default: formatHostPort(BOOTSTRAP_DEFAULTS.admin), help: "Envoy's admin address in the generated bootstrap (keep it on loopback); the drain calls it." },
  { key: "envoyStatsListen", flag: "envoy-stats-listen", type: "hostport", default: formatHostPort(BOOTSTRAP_DEFAULTS.stats), help: "Listener serving only Envoy's /stats/prometheus and /ready and the sidecar's /metrics, for Prometheus; empty: none." },
  { key: "inboundListenHost", flag: "inbound-listen-host", type: "string", default: BOOTSTRAP_DEFAULTS.inboundHost, help: "Address Envoy's inbound listeners bind to (their ports are the Dataplane's inbound ports)." },
  { key: "inboundPort", flag: "inbound-port", type: "int", default: BOOTSTRAP_DEFAULTS.inboundPort, min: 0, help: "Without --dataplane-file: the port of the one inbound listener." },
  { key: "appPort", flag: "app-port", type: "int", default: BOOTSTRAP_DEFAULTS.appPort, min: 0, help: "Without --dataplane-file: the app's port behind that inbound (on 127.0.0.1); with meshext up, where its demo app listens (0: a free port)." },
  { key: "outboundUpstreams", flag: "outbound-upstreams", type: "string", default: "", help: "Where each Dataplane outbound goes, SERVICE=HOST:PORT,… (an outbound without one is refused)." },
  { key: "wasmModule", flag: "wasm-module", type: "path", default: "", help: "The drain filter's .wasm; empty: build/meshext_drain.wasm of this installation." },
  { key: "tlsCert", flag: "tls-cert", type: "path", default: "", help: "Inbound mTLS: this dataplane's certificate chain (PEM). With --tls-key and --tls-ca; clients must present a certificate." },
  { key: "tlsKey", flag: "tls-key", type: "path", default: "", help: "Inbound mTLS: the certificate's private key (PEM)." },
  { key: "tlsCa", flag: "tls-ca", type: "path", default: "", help: "Inbound mTLS: the CA that client certificates must chain to (PEM)." },
  { key: "bootstrapFile", flag: "bootstrap-file", type: "path", default: "", help: "Where the generated Envoy bootstrap is written; empty: a new temporary directory." },
] as const satisfies readonly FlagSpec[];

export type EnvoyConfig = FlagValues<typeof ENVOY_FLAGS>;

/** Checks that span flags (all three TLS files or none); throws ConfigError naming them. */
export function checkEnvoyConfig(config: EnvoyConfig): EnvoyConfig {
  const tls = [config.tlsCert, config.tlsKey, config.tlsCa].filter(Boolean).length;
  if (tls !== 0 && tls !== 3) throw new ConfigError("--tls-cert, --tls-key and --tls-ca go together: give all three or none");
  if (/:0$/.test(config.envoyAdminListen) && config.envoyStatsListen) {
    throw new ConfigError("--envoy-admin-listen on port 0 needs --envoy-stats-listen \"\": the stats listener reaches Envoy's admin by its port");
  }
  return config;
}
