// The sidecar flags that describe its pod, as `meshext inject` renders them: the app's probes it
// forwards, and whether the sidecar registers the Dataplane. Part of SIDECAR_FLAGS (sidecar.ts). (Envoy's
// inbound, app and stats ports are the bootstrap's flags: config/envoy.ts.)
import { parseProbeList } from "../probes/virtual-path.js";
import { ConfigError, type FlagSpec } from "./flags.js";

export const POD_FLAGS = [
  { key: "probeListen", flag: "probe-listen", type: "hostport", default: "", help: "Serve the app's rewritten kubelet probes here (meshext inject: 0.0.0.0:9000), forwarding each to the app's real probe; empty: off." },
  { key: "appProbes", flag: "app-probes", type: "string", default: "", help: "The probe paths the probe port forwards, comma-separated: /<port>/<path>, /https/<port>/<path>, /tcp/<port>, /grpc/<port>[/<service>]; any other path is 404." },
  { key: "register", flag: "register", type: "bool", default: true, help: "Register this Dataplane with --control-plane (and deregister on exit); --no-register when another control plane (Kuma's) owns it. Policies are fetched either way." },
] as const satisfies readonly FlagSpec[];

/** Throws a ConfigError naming the flag for a malformed --app-probes. */
export function checkPodFlags(config: { appProbes: string; probeListen: string }): void {
  const probes = parseProbeList(config.appProbes);
  if (!probes.ok) throw new ConfigError(`--app-probes: ${probes.message}`);
  if (probes.paths.size > 0 && !config.probeListen) throw new ConfigError("--app-probes needs --probe-listen (the port kubelet's rewritten probes reach)");
}
