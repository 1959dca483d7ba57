// The flags of `meshext inject` and the typed InjectSettings they resolve to. Defaults shared with
// the sidecar (drain time, its ports) are read from SIDECAR_FLAGS, never repeated here.
import { ConfigError, type FlagSpec, flagWithSource, type ParsedArgs, type Resolved, resolveFlags } from "../config/flags.js";
import { SIDECAR_FLAGS } from "../config/sidecar.js";

type SidecarKey = (typeof SIDECAR_FLAGS)[number]["key"];

function sidecarFlag(key: SidecarKey): FlagSpec {
  return SIDECAR_FLAGS.find((s) => s.key === key)!;
}

/** Port of a HOST:PORT sidecar default, e.g. 9902 from admin-listen "127.0.0.1:9902". */
export function sidecarDefaultPort(key: "grpcListen" | "adminListen"): number {
  return Number(String(sidecarFlag(key).default).split(":").pop());
}

/** inject's variables are its own (MESHEXT_INJECT_CONTROL_PLANE): MESHEXT_CONTROL_PLANE is the sidecar's policy source. */
export const INJECT_ENV_PREFIX = "MESHEXT_INJECT_";

/** The sidecar image envoy/Dockerfile builds (target `sidecar`, tag named in its header): meshext and Envoy. */
export const SIDECAR_IMAGE = "meshext/sidecar:0.1.0";

export const INJECT_FLAGS = [
  { key: "config", flag: "config", type: "path", default: "", help: "YAML or JSON file of flag values (keys are flag names)." },
  { key: "file", flag: "file", type: "path", default: "", help: "Workload YAML/JSON to inject (also -f FILE); empty or - reads stdin." },
  { key: "patches", flag: "patches", type: "path", default: "", help: "Directory of ContainerPatch YAML/JSON files." },
  { key: "controlPlane", flag: "control-plane", type: "url", default: "", help: "Control plane to fetch ContainerPatches from: GET {url}/containerpatches/{name}." },
  { key: "controlPlaneToken", flag: "control-plane-token", type: "string", default: "", help: "Bearer token for the control plane API." },
  { key: "sidecarControlPlane", flag: "sidecar-control-plane", type: "url", default: "", help: "Control plane URL the injected sidecar fetches policies from (as reached from the pod); empty: none set." },
  { key: "defaultPatches", flag: "default-patches", type: "string", default: "", help: "ContainerPatch names (a,b) applied in order when a workload has no kuma.io/container-patches annotation." },
  { key: "sidecarImage", flag: "sidecar-image", type: "string", default: SIDECAR_IMAGE, help: "Image of the sidecar container: meshext and Envoy (envoy/Dockerfile, target sidecar); its entrypoint is meshext." },
  { key: "initImage", flag: "init-image", type: "string", default: SIDECAR_IMAGE, help: "Image of the traffic-redirect init container (runs meshext redirect: meshext and iptables; the sidecar image has both)." },
  { key: "proxyUid", flag: "proxy-uid", type: "int", default: 5678, min: 1, help: "UID (and GID) of both sidecars; the init container does not redirect their traffic." },
  { ...sidecarFlag("drainTimeMs"), help: "Drain time given to the sidecar and Envoy; the pod's grace period is raised to cover it." },
  { key: "graceMargin", flag: "grace-margin", type: "duration", default: 5000, help: "Added to --drain-time for terminationGracePeriodSeconds (time to exit after draining)." },
  { key: "nativeSidecars", flag: "native-sidecars", type: "bool", default: true, help: "Inject Kubernetes native sidecars (initContainers with restartPolicy: Always; Kubernetes >= 1.33); --no-native-sidecars injects classic sidecars (Kubernetes >= 1.27). The workload annotation meshext.io/native-sidecars: \"true\"/\"false\" wins over this flag." },
  { key: "startupTimeout", flag: "startup-timeout", type: "duration", default: 60000, min: 1000, help: "How long the app's start waits for the sidecar and Envoy to be ready (classic postStart timeout; native startupProbe failureThreshold at 1s period)." },
  { key: "probePort", flag: "probe-port", type: "int", default: 9000, min: 1, help: "Port of the sidecar's probe forwarder: the app's HTTP, TCP and gRPC probes are rewritten to it (annotation meshext.io/virtual-probes-port wins)." },
  { key: "virtualProbes", flag: "virtual-probes", type: "bool", default: true, help: "Rewrite the app's probes to the probe port (--no-virtual-probes, or the annotation meshext.io/virtual-probes: \"false\", leaves them as written)." },
  { key: "statsPort", flag: "stats-port", type: "int", default: 9903, min: 1, help: "Port of Envoy's stats listener (GET /stats/prometheus only), announced to Prometheus." },
  { key: "register", flag: "register", type: "bool", default: true, help: "The sidecar registers its Dataplane with the control plane; --no-register when a Kuma control plane owns the Dataplane (kuma-dp on the same mesh)." },
  { key: "sidecarTokenSecret", flag: "sidecar-control-plane-token-secret", type: "string", default: "", help: "Secret holding the sidecar's control-plane token, NAME or NAME:KEY (key default: token), given as MESHEXT_CONTROL_PLANE_TOKEN through valueFrom." },
  { key: "sidecarExec", flag: "sidecar-exec", type: "string", default: "node /meshext/dist/extproc/cli.js", help: "The meshext command inside the sidecar image, for exec hooks and probes (words split on spaces)." },
] as const satisfies readonly FlagSpec[];

export interface InjectSettings {
  file: string;
  patchesDir: string;
  controlPlane: string;
  controlPlaneToken: string;
  /** Given to the injected sidecar as MESHEXT_CONTROL_PLANE when set. */
  sidecarControlPlane: string;
  /** Patch names applied when the workload has no kuma.io/container-patches annotation. */
  defaultPatches: string[];
  sidecarImage: string;
  initImage: string;
  proxyUid: number;
  drainTimeMs: number;
  graceMarginMs: number;
  /** Default sidecar mode for workloads without the meshext.io/native-sidecars annotation. */
  nativeSidecars: boolean;
  startupTimeoutMs: number;
  probePort: number;
  virtualProbes: boolean;
  statsPort: number;
  register: boolean;
  /** NAME or NAME:KEY of the Secret with the sidecar's control-plane token; empty: none. */
  sidecarTokenSecret: string;
  /** argv prefix that runs `meshext` inside the sidecar image. */
  sidecarExec: string[];
}

/** "a, b,,c" → ["a","b","c"]. */
export function splitNames(list: string): string[] {
  return list
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** `-f FILE` / `-fFILE` → `--file FILE`, so the shared flag parser sees only long flags. */
function expandShortFlags(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (arg === "-f") {
      const next = argv[i + 1];
      if (next === undefined) throw new ConfigError("-f: needs a value");
      out.push(`--file=${next}`);
      i++;
    } else if (arg.startsWith("-f") && !arg.startsWith("--")) {
      out.push(`--file=${arg.slice(2)}`);
    } else {
      out.push(arg);
    }
  }
  return out;
}

/** Resolves the inject flags (throws ConfigError on bad values). */
export function loadInjectSettings(argv: readonly string[], env: NodeJS.ProcessEnv): { settings: InjectSettings; parsed: ParsedArgs } {
  const parsed = resolveFlags(INJECT_FLAGS, expandShortFlags(argv), env, INJECT_ENV_PREFIX);
  if (parsed.rest.length > 0) throw new ConfigError(`unexpected arguments after --: ${parsed.rest.join(" ")}`);
  return { settings: injectSettingsFrom(parsed.values, parsed), parsed };
}

/** InjectSettings from resolved flag values of INJECT_FLAGS (or a table that includes them, as `meshext webhook`'s). */
export function injectSettingsFrom(v: Resolved, parsed?: Pick<ParsedArgs, "sources">): InjectSettings {
  const settings: InjectSettings = {
    file: (v.file as string | undefined) ?? "",
    patchesDir: v.patches as string,
    controlPlane: v.controlPlane as string,
    controlPlaneToken: v.controlPlaneToken as string,
    sidecarControlPlane: v.sidecarControlPlane as string,
    defaultPatches: splitNames(v.defaultPatches as string),
    sidecarImage: v.sidecarImage as string,
    initImage: v.initImage as string,
    proxyUid: v.proxyUid as number,
    drainTimeMs: v.drainTimeMs as number,
    graceMarginMs: v.graceMargin as number,
    nativeSidecars: v.nativeSidecars as boolean,
    startupTimeoutMs: v.startupTimeout as number,
    probePort: v.probePort as number,
    virtualProbes: v.virtualProbes as boolean,
    statsPort: v.statsPort as number,
    register: v.register as boolean,
    sidecarTokenSecret: v.sidecarTokenSecret as string,
    sidecarExec: (v.sidecarExec as string).split(/\s+/).filter((w) => w !== ""),
  };
  if (settings.sidecarExec.length === 0) throw new ConfigError("--sidecar-exec: must not be empty");
  for (const key of ["sidecarImage", "initImage"] as const) {
    if (settings[key].trim() === "") throw new ConfigError(`--${INJECT_FLAGS.find((f) => f.key === key)!.flag}: must not be empty`);
  }
  for (const key of ["probePort", "statsPort"] as const) {
    if (settings[key] > 65535) throw new ConfigError(`--${INJECT_FLAGS.find((f) => f.key === key)!.flag}: must be a port from 1 to 65535`);
  }
  if (settings.virtualProbes && settings.probePort === settings.statsPort) throw new ConfigError("--probe-port and --stats-port must differ");
  if (settings.sidecarTokenSecret && !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[-._a-zA-Z0-9]+)?$/.test(settings.sidecarTokenSecret)) {
    throw new ConfigError(`--sidecar-control-plane-token-secret: expected NAME or NAME:KEY (a Secret name and one of its keys), got ${JSON.stringify(settings.sidecarTokenSecret)}`);
  }
  if (settings.patchesDir && settings.controlPlane) {
    const flag = (key: string) => (parsed ? flagWithSource(parsed, INJECT_FLAGS.find((f) => f.key === key)!) : `--${INJECT_FLAGS.find((f) => f.key === key)!.flag}`);
    throw new ConfigError(`${flag("patches")} and ${flag("controlPlane")} are exclusive: pick one ContainerPatch source`);
  }
  return settings;
}
