// Renders the containers and volume that injection adds to a pod, from InjectSettings and the facts
// read from the pod (its ports, probes, identity), for either sidecar mode (classic containers, or
// native restartPolicy: Always init containers). One sidecar container runs `meshext run -- envoy`
// from an image holding both (as kuma-dp's image does): meshext writes Envoy's bootstrap from its
// flags and starts Envoy, so no file is left for the user to write. Pure: no I/O. Names here are how
// re-injection recognises its own containers.
import { formatDurationMs } from "../config/flags.js";
import { SIDECAR_RESOURCES } from "../config/runtime.js";
import { SIDECAR_FLAGS } from "../config/sidecar.js";
import { formatProbeList, type VirtualProbe } from "../probes/virtual-path.js";
import { type InjectSettings, sidecarDefaultPort } from "./settings.js";

/** `classic`: sidecars in `containers`; `native`: in `initContainers` with restartPolicy: Always. */
export type SidecarMode = "classic" | "native";

export type Container = Record<string, unknown> & { name: string };

export const SIDECAR_CONTAINER = "meshext-sidecar";
export const INIT_CONTAINER = "meshext-init";
/** Writable scratch space (the root filesystem is read-only): `meshext run` writes Envoy's bootstrap there. */
export const TMP_VOLUME = "meshext-tmp";
export const TMP_MOUNT_PATH = "/tmp";
/** What earlier releases injected (a separate Envoy container and its ConfigMap volume): re-injection removes them. */
export const LEGACY_CONTAINERS = ["meshext-envoy"] as const;
export const LEGACY_VOLUMES = ["meshext-envoy-config"] as const;
export const INJECTED_ANNOTATION = "meshext.io/injected";
/** Pod label selecting injected pods (the shipped PodMonitor selects on it). */
export const INJECTED_LABEL = "meshext.io/injected";

export const ENVOY_ADMIN_PORT = 9901;
/** Envoy's inbound listener, where the init container redirects the app port's traffic (Kuma's redirectPortInbound). */
export const INBOUND_REDIRECT_PORT = 15006;
export const EXTPROC_GRPC_PORT = sidecarDefaultPort("grpcListen");
export const SIDECAR_ADMIN_PORT = sidecarDefaultPort("adminListen");
const DRAIN_MIN_DEFAULT_MS = Number(SIDECAR_FLAGS.find((f) => f.key === "drainMinMs")!.default);

/** Container port names: the PodMonitor and the Prometheus scrape jobs refer to them. */
export const PORT_NAMES = { admin: "sidecar-admin", stats: "envoy-stats", probes: "meshext-probes" } as const;

/** What injection reads from the pod itself and passes to the sidecar. */
export interface PodFacts {
  /** Inbound tags, k=v in order (kuma.io/service first). */
  tags: [string, string][];
  /** kuma.io/mesh annotation, when set. */
  mesh?: string;
  /** The app's TCP container ports, sorted. */
  inboundPorts: number[];
  /** The one app port whose inbound traffic goes through Envoy (meshext.io/inbound-port, or the only port); none for a pod without ports. */
  appPort?: number;
  /** The app's probes, forwarded by the probe port. */
  probes: VirtualProbe[];
  /** The probe port is served (--virtual-probes, unless the workload opts out). */
  virtualProbes: boolean;
}

export const NO_POD_FACTS: PodFacts = { tags: [], inboundPorts: [], probes: [], virtualProbes: true };

/**
 * One container now runs Envoy and meshext: Kuma's kuma-sidecar defaults for Envoy (50m/64Mi requests,
 * 1000m/512Mi limits) plus the meshext sidecar's measured figures (extproc/config/runtime.ts).
 */
const ENVOY_RESOURCES = { requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "1000m", memory: "512Mi" } };

function addQuantity(a: string, b: string): string {
  const unit = /Mi$/.test(a) ? "Mi" : "m";
  if (!a.endsWith(unit) || !b.endsWith(unit)) throw new Error(`cannot add ${a} and ${b}`);
  return `${Number(a.slice(0, -unit.length)) + Number(b.slice(0, -unit.length))}${unit}`;
}

/** A fresh object per container. */
export function sidecarResources(): { requests: { cpu: string; memory: string }; limits: { cpu: string; memory: string } } {
  const sum = (k: "requests" | "limits") => ({
    cpu: addQuantity(ENVOY_RESOURCES[k].cpu, SIDECAR_RESOURCES[k].cpu),
    memory: addQuantity(ENVOY_RESOURCES[k].memory, SIDECAR_RESOURCES[k].memory),
  });
  return { requests: sum("requests"), limits: sum("limits") };
}
const INIT_RESOURCES = { requests: { cpu: "20m", memory: "20Mi" }, limits: { cpu: "100m", memory: "50Mi" } };

export interface RenderedSidecar {
  mode: SidecarMode;
  sidecar: Container;
  init: Container;
  volume: Record<string, unknown>;
  terminationGracePeriodSeconds: number;
}

function proxySecurityContext(uid: number): Record<string, unknown> {
  return {
    runAsUser: uid,
    runAsGroup: uid,
    runAsNonRoot: true,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ["ALL"] },
  };
}

/** `meshext <args>` as an exec hook or probe runs it inside the sidecar image (--sidecar-exec). */
function meshextExec(s: InjectSettings, ...args: string[]): { exec: { command: string[] } } {
  return { exec: { command: [...s.sidecarExec, ...args] } };
}

/**
 * Hooks and probes per mode. Every state-changing call runs as an exec inside the sidecar container
 * against the loopback admin port (as kuma-dp's `killall -USR2`): the admin port's drain routes never
 * answer the network, so no hook needs them to.
 *
 * Classic: kubelet sends SIGTERM to a container only after its own preStop returns. The sidecar's
 * hook starts the drain and waits for it; Envoy is the sidecar's child and is stopped by it after the
 * drain. postStart holds the app's start until the sidecar and Envoy are ready (Istio's
 * holdApplicationUntilProxyStarts: kubelet starts the containers in order and runs each postStart
 * before starting the next).
 *
 * Native: the sidecar's preStop runs when the pod starts terminating, alongside the app's; it enters
 * drain-forever and returns at once. kubelet sends SIGTERM to the sidecar only once the app has
 * exited, and the sidecar then exits at once. A startupProbe holds the app's start instead of postStart.
 */
function lifecycleFor(s: InjectSettings, mode: SidecarMode, startupTimeoutSeconds: number, graceSeconds: number) {
  if (mode === "native") {
    return {
      lifecycle: { preStop: meshextExec(s, "drain", "--forever") },
      startupProbe: { ...meshextExec(s, "wait-ready", "--timeout=0s"), periodSeconds: 1, timeoutSeconds: 3, failureThreshold: startupTimeoutSeconds },
    };
  }
  return {
    lifecycle: {
      postStart: meshextExec(s, "wait-ready", `--timeout=${startupTimeoutSeconds}s`),
      preStop: meshextExec(s, "drain", `--timeout=${graceSeconds}s`),
    },
  };
}

/** The `meshext run` flags for this pod. */
function runArgs(s: InjectSettings, mode: SidecarMode, pod: PodFacts): string[] {
  return [
    "run",
    `--grpc-listen=127.0.0.1:${EXTPROC_GRPC_PORT}`,
    // 0.0.0.0: kubelet probes /ready and Prometheus scrapes /metrics on the pod IP. Only those
    // public, read-only routes answer there; /drain, /explain… answer loopback peers only.
    `--admin-listen=0.0.0.0:${SIDECAR_ADMIN_PORT}`,
    `--envoy-admin=http://127.0.0.1:${ENVOY_ADMIN_PORT}`,
    `--drain-time=${formatDurationMs(s.drainTimeMs)}`,
    // The sidecar refuses a minimum above the maximum: a drain time below its --drain-min default lowers both.
    ...(s.drainTimeMs < DRAIN_MIN_DEFAULT_MS ? [`--drain-min=${formatDurationMs(s.drainTimeMs)}`] : []),
    // Native: kubelet's SIGTERM comes only once the app has exited, so there is nothing left to drain.
    ...(mode === "native" ? ["--exit-on-sigterm"] : []),
    // The bootstrap's one inbound: Envoy listens where the init container redirects to, the app behind it on loopback.
    `--inbound-port=${INBOUND_REDIRECT_PORT}`,
    ...(pod.appPort !== undefined ? [`--app-port=${pod.appPort}`] : []),
    `--envoy-admin-listen=127.0.0.1:${ENVOY_ADMIN_PORT}`,
    `--envoy-stats-listen=0.0.0.0:${s.statsPort}`,
    ...(pod.virtualProbes ? [`--probe-listen=0.0.0.0:${s.probePort}`] : []),
    ...(pod.virtualProbes && pod.probes.length > 0 ? [`--app-probes=${formatProbeList(pod.probes)}`] : []),
    ...(pod.mesh ? [`--mesh=${pod.mesh}`] : []),
    ...(pod.tags.length > 0 ? [`--dataplane-tags=${pod.tags.map(([k, v]) => `${k}=${v}`).join(",")}`] : []),
    ...(s.register ? [] : ["--no-register"]),
    "--",
    "envoy",
  ];
}

/** `NAME` or `NAME:KEY` of --sidecar-control-plane-token-secret (key defaults to "token"). */
function secretRef(ref: string): { name: string; key: string } {
  const [name, key] = ref.split(":");
  return { name: name!, key: key || "token" };
}

export function renderSidecar(s: InjectSettings, mode: SidecarMode = "native", pod: PodFacts = NO_POD_FACTS): RenderedSidecar {
  const terminationGracePeriodSeconds = Math.ceil((s.drainTimeMs + s.graceMarginMs) / 1000);
  const hooks = lifecycleFor(s, mode, Math.ceil(s.startupTimeoutMs / 1000), terminationGracePeriodSeconds);
  const sidecar: Container = {
    name: SIDECAR_CONTAINER,
    image: s.sidecarImage,
    args: runArgs(s, mode, pod),
    env: [
      { name: "MESHEXT_DATAPLANE_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
      { name: "MESHEXT_DATAPLANE_ADDRESS", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
      ...(s.sidecarControlPlane ? [{ name: "MESHEXT_CONTROL_PLANE", value: s.sidecarControlPlane }] : []),
      ...(s.sidecarTokenSecret ? [{ name: "MESHEXT_CONTROL_PLANE_TOKEN", valueFrom: { secretKeyRef: secretRef(s.sidecarTokenSecret) } }] : []),
    ],
    ports: [
      { name: PORT_NAMES.admin, containerPort: SIDECAR_ADMIN_PORT, protocol: "TCP" },
      { name: PORT_NAMES.stats, containerPort: s.statsPort, protocol: "TCP" },
      ...(pod.virtualProbes ? [{ name: PORT_NAMES.probes, containerPort: s.probePort, protocol: "TCP" }] : []),
    ],
    // Readiness only: /ready is 503 while draining, which must take the pod out of endpoints,
    // never restart it (so no liveness probe on the same path).
    readinessProbe: { httpGet: { path: "/ready", port: SIDECAR_ADMIN_PORT }, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 1 },
    ...hooks,
    resources: sidecarResources(),
    securityContext: proxySecurityContext(s.proxyUid),
    volumeMounts: [{ name: TMP_VOLUME, mountPath: TMP_MOUNT_PATH }],
    ...(mode === "native" ? { restartPolicy: "Always" } : {}),
  };
  const init: Container = {
    name: INIT_CONTAINER,
    image: s.initImage,
    // Only the app port's inbound traffic is redirected: kubelet's probes and Prometheus reach the probe,
    // admin and stats ports directly (each answers only what it must), and outbound traffic is not
    // touched (the bootstrap has no transparent outbound listener).
    command: [...s.sidecarExec, "redirect"],
    args: [`--app-port=${pod.appPort ?? 0}`, `--redirect-port=${INBOUND_REDIRECT_PORT}`],
    resources: INIT_RESOURCES,
    securityContext: {
      runAsUser: 0,
      runAsGroup: 0,
      runAsNonRoot: false,
      capabilities: { add: ["NET_ADMIN", "NET_RAW"], drop: ["ALL"] },
    },
  };
  const volume = { name: TMP_VOLUME, emptyDir: { sizeLimit: "64Mi" } };
  return { mode, sidecar, init, volume, terminationGracePeriodSeconds };
}

/** Every port the sidecar binds in the pod's network namespace (loopback ones collide with the app's too). */
export function sidecarPorts(s: InjectSettings): number[] {
  return [EXTPROC_GRPC_PORT, ENVOY_ADMIN_PORT, SIDECAR_ADMIN_PORT, s.statsPort, INBOUND_REDIRECT_PORT, ...(s.virtualProbes ? [s.probePort] : [])];
}

/** The settings, and which mode a workload without the annotation gets; the pod's facts complete the render. */
export interface SidecarChoice {
  settings: InjectSettings;
  /** --native-sidecars: the mode of workloads without the meshext.io/native-sidecars annotation. */
  nativeByDefault: boolean;
  render(mode: SidecarMode, pod: PodFacts): RenderedSidecar;
}

export function renderSidecars(s: InjectSettings): SidecarChoice {
  return { settings: s, nativeByDefault: s.nativeSidecars, render: (mode, pod) => renderSidecar(s, mode, pod) };
}
