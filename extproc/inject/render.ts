// Renders the containers and volume that injection adds to a pod, from InjectSettings alone, for
// either sidecar mode (classic containers, or native restartPolicy: Always init containers).
// Pure: no I/O. Names here are how re-injection recognises its own containers.
import { formatDurationMs } from "../config/flags.js";
import { SIDECAR_RESOURCES } from "../config/runtime.js";
import { SIDECAR_FLAGS } from "../config/sidecar.js";
import { DRAIN_PATHS } from "../drain/routes.js";
import { type InjectSettings, sidecarDefaultPort } from "./settings.js";

/** `classic`: sidecars in `containers`; `native`: in `initContainers` with restartPolicy: Always (Kubernetes ≥ 1.29). */
export type SidecarMode = "classic" | "native";

export type Container = Record<string, unknown> & { name: string };

export const ENVOY_CONTAINER = "meshext-envoy";
export const SIDECAR_CONTAINER = "meshext-sidecar";
export const INIT_CONTAINER = "meshext-init";
export const ENVOY_CONFIG_VOLUME = "meshext-envoy-config";
export const INJECTED_ANNOTATION = "meshext.io/injected";

export const ENVOY_ADMIN_PORT = 9901;
/** Transparent-proxy redirect targets, as in Kuma (redirectPortInbound / redirectPortOutbound). */
export const INBOUND_REDIRECT_PORT = 15006;
export const OUTBOUND_REDIRECT_PORT = 15001;
export const EXTPROC_GRPC_PORT = sidecarDefaultPort("grpcListen");
export const SIDECAR_ADMIN_PORT = sidecarDefaultPort("adminListen");
/**
 * The classic Envoy container's preStop target: public and read-only, it starts nothing and answers
 * once the drain the sidecar's own (exec, loopback) hook started is complete (extproc/drain/routes.ts).
 */
export const ENVOY_PRESTOP_WAIT_PATH = DRAIN_PATHS.wait;
const ENVOY_CONFIG_DIR = "/etc/meshext";
const DRAIN_MIN_DEFAULT_MS = Number(SIDECAR_FLAGS.find((f) => f.key === "drainMinMs")!.default);

/** Kuma's default sidecar resources, for Envoy; override with a ContainerPatch. A fresh object per container. */
function sidecarResources(): Record<string, unknown> {
  return { requests: { cpu: "50m", memory: "64Mi" }, limits: { cpu: "1000m", memory: "512Mi" } };
}
/** The meshext sidecar's, measured (extproc/config/runtime.ts). A fresh object per container. */
function meshextResources(): Record<string, unknown> {
  return { requests: { ...SIDECAR_RESOURCES.requests }, limits: { ...SIDECAR_RESOURCES.limits } };
}
const INIT_RESOURCES = { requests: { cpu: "20m", memory: "20Mi" }, limits: { cpu: "100m", memory: "50Mi" } };

export interface RenderedSidecar {
  mode: SidecarMode;
  envoy: Container;
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
 * hook starts the drain and waits for it; Envoy's hook waits for the same drain through the public,
 * read-only /drain/wait (the Envoy image has no meshext to exec). postStart holds the app's start
 * until the sidecar and Envoy are ready (Istio's holdApplicationUntilProxyStarts: kubelet starts the
 * containers in order and runs each postStart before starting the next).
 *
 * Native: the sidecar's preStop runs when the pod starts terminating, alongside the app's; it enters
 * drain-forever and returns at once. kubelet sends SIGTERM to the sidecars only once the app has
 * exited, and the sidecar then exits at once. A startupProbe holds the app's start instead of postStart.
 */
function lifecycleFor(s: InjectSettings, mode: SidecarMode, startupTimeoutSeconds: number, graceSeconds: number) {
  if (mode === "native") {
    return {
      envoy: {},
      sidecar: {
        lifecycle: { preStop: meshextExec(s, "drain", "--forever") },
        startupProbe: { ...meshextExec(s, "wait-ready", "--timeout=0s"), periodSeconds: 1, timeoutSeconds: 3, failureThreshold: startupTimeoutSeconds },
      },
    };
  }
  return {
    envoy: { lifecycle: { preStop: { httpGet: { path: ENVOY_PRESTOP_WAIT_PATH, port: SIDECAR_ADMIN_PORT } } } },
    sidecar: {
      lifecycle: {
        postStart: meshextExec(s, "wait-ready", `--timeout=${startupTimeoutSeconds}s`),
        preStop: meshextExec(s, "drain", `--timeout=${graceSeconds}s`),
      },
    },
  };
}

export function renderSidecar(s: InjectSettings, mode: SidecarMode = "classic"): RenderedSidecar {
  const terminationGracePeriodSeconds = Math.ceil((s.drainTimeMs + s.graceMarginMs) / 1000);
  const hooks = lifecycleFor(s, mode, Math.ceil(s.startupTimeoutMs / 1000), terminationGracePeriodSeconds);
  const restart = mode === "native" ? { restartPolicy: "Always" } : {};
  const drainSeconds = Math.ceil(s.drainTimeMs / 1000);
  const envoy: Container = {
    name: ENVOY_CONTAINER,
    image: s.envoyImage,
    args: ["--config-path", `${ENVOY_CONFIG_DIR}/envoy.yaml`, "--drain-time-s", String(drainSeconds)],
    ports: [
      { name: "envoy-admin", containerPort: ENVOY_ADMIN_PORT, protocol: "TCP" },
      { name: "envoy-inbound", containerPort: INBOUND_REDIRECT_PORT, protocol: "TCP" },
      { name: "envoy-outbound", containerPort: OUTBOUND_REDIRECT_PORT, protocol: "TCP" },
    ],
    resources: sidecarResources(),
    securityContext: proxySecurityContext(s.proxyUid),
    volumeMounts: [{ name: ENVOY_CONFIG_VOLUME, mountPath: ENVOY_CONFIG_DIR, readOnly: true }],
    ...hooks.envoy,
    ...restart,
  };
  const sidecar: Container = {
    name: SIDECAR_CONTAINER,
    image: s.sidecarImage,
    args: [
      "sidecar",
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
    ],
    env: [
      { name: "MESHEXT_DATAPLANE_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
      { name: "MESHEXT_DATAPLANE_ADDRESS", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
      ...(s.sidecarControlPlane ? [{ name: "MESHEXT_CONTROL_PLANE", value: s.sidecarControlPlane }] : []),
    ],
    ports: [
      { name: "extproc-grpc", containerPort: EXTPROC_GRPC_PORT, protocol: "TCP" },
      { name: "sidecar-admin", containerPort: SIDECAR_ADMIN_PORT, protocol: "TCP" },
    ],
    // Readiness only: /ready is 503 while draining, which must take the pod out of endpoints,
    // never restart it (so no liveness probe on the same path).
    readinessProbe: { httpGet: { path: "/ready", port: SIDECAR_ADMIN_PORT }, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 1 },
    ...hooks.sidecar,
    resources: meshextResources(),
    securityContext: proxySecurityContext(s.proxyUid),
    ...restart,
  };
  const init: Container = {
    name: INIT_CONTAINER,
    image: s.initImage,
    command: ["/usr/bin/kumactl", "install", "transparent-proxy"],
    args: [
      "--kuma-dp-uid", String(s.proxyUid),
      "--redirect-inbound-port", String(INBOUND_REDIRECT_PORT),
      "--redirect-outbound-port", String(OUTBOUND_REDIRECT_PORT),
      // kubelet's probes and Prometheus reach the sidecar admin port directly; on the pod IP it
      // answers only its public, read-only routes (/metrics, /ready, /drain/wait).
      "--exclude-inbound-ports", String(SIDECAR_ADMIN_PORT),
      "--verbose",
    ],
    resources: INIT_RESOURCES,
    securityContext: {
      runAsUser: 0,
      runAsGroup: 0,
      runAsNonRoot: false,
      capabilities: { add: ["NET_ADMIN", "NET_RAW"], drop: ["ALL"] },
    },
  };
  const volume = { name: ENVOY_CONFIG_VOLUME, configMap: { name: s.envoyConfigMap } };
  return { mode, envoy, sidecar, init, volume, terminationGracePeriodSeconds };
}

/** Both modes, and which one a workload without the annotation gets. */
export interface SidecarChoice {
  classic: RenderedSidecar;
  native: RenderedSidecar;
  /** --native-sidecars: the mode of workloads without the meshext.io/native-sidecars annotation. */
  nativeByDefault: boolean;
}

export function renderSidecars(s: InjectSettings): SidecarChoice {
  return { classic: renderSidecar(s, "classic"), native: renderSidecar(s, "native"), nativeByDefault: s.nativeSidecars };
}
