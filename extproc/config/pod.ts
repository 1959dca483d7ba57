// The sidecar flags that describe its pod, as `meshext inject` renders them: the app's probes it
// forwards, the inbound ports and redirect ports Envoy's bootstrap listens for, Envoy's stats
// listener, and whether the sidecar registers the Dataplane. Part of SIDECAR_FLAGS (sidecar.ts).
import { parseProbeList } from "../probes/virtual-path.js";
import { ConfigError, type FlagSpec } from "./flags.js";

export const POD_FLAGS = [
  { key: "probeListen", flag: "probe-listen", type: "hostport", default: "", help: "Serve the app's rewritten kubelet probes here (meshext inject: 0.0.0.0:9000), forwarding each to the app's real probe; empty: off." },
  { key: "appProbes", flag: "app-probes", type: "string", default: "", help: "The probe paths the probe port forwards, comma-separated: /<port>/<path>, /https/<port>/<path>, /tcp/<port>, /grpc/<port>[/<service>]; any other path is 404." },
  { key: "inboundPorts", flag: "inbound-ports", type: "string", default: "", help: "The app's ports (comma-separated) that Envoy's inbound listener serves, forwarding to the app on loopback." },
  { key: "inboundRedirectPort", flag: "inbound-redirect-port", type: "int", default: 0, min: 0, help: "Port the traffic redirection sends inbound traffic to (Envoy's inbound listener; meshext inject: 15006); 0: no transparent proxy." },
  { key: "outboundRedirectPort", flag: "outbound-redirect-port", type: "int", default: 0, min: 0, help: "Port the traffic redirection sends outbound traffic to (Envoy's outbound listener; meshext inject: 15001); 0: no transparent proxy." },
  { key: "statsListen", flag: "stats-listen", type: "hostport", default: "", help: "Envoy's stats listener, serving only GET /stats/prometheus (never the admin API), for Prometheus; empty: none." },
  { key: "register", flag: "register", type: "bool", default: true, help: "Register this Dataplane with --control-plane (and deregister on exit); --no-register when another control plane (Kuma's) owns it. Policies are fetched either way." },
] as const satisfies readonly FlagSpec[];

/** The --inbound-ports list as numbers (validated by checkPodFlags). */
export function inboundPortList(list: string): number[] {
  return list.split(",").map((s) => s.trim()).filter(Boolean).map(Number);
}

/** Throws a ConfigError naming the flag for a malformed --app-probes or --inbound-ports. */
export function checkPodFlags(config: { appProbes: string; inboundPorts: string; probeListen: string }): void {
  const probes = parseProbeList(config.appProbes);
  if (!probes.ok) throw new ConfigError(`--app-probes: ${probes.message}`);
  if (probes.paths.size > 0 && !config.probeListen) throw new ConfigError("--app-probes needs --probe-listen (the port kubelet's rewritten probes reach)");
  for (const raw of config.inboundPorts.split(",").map((s) => s.trim()).filter(Boolean)) {
    const n = Number(raw);
    if (!/^\d{1,5}$/.test(raw) || n < 1 || n > 65535) throw new ConfigError(`--inbound-ports: ${JSON.stringify(raw)} is not a port from 1 to 65535`);
  }
}
