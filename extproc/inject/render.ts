// Renders the containers and volume that injection adds to a pod, from InjectSettings alone.
// Pure: no I/O. Names here are how re-injection recognises its own containers.
import { formatDurationMs } from "../config/flags.js";
import { SIDECAR_NODE_OPTIONS, SIDECAR_RESOURCES } from "../config/runtime.js";
import { type InjectSettings, sidecarDefaultPort } from "./settings.js";

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
 * preStop target. kubelet's httpGet hooks can only GET, and the sidecar's GET /drain only reports
 * status; GET /drain/prestop is its POST /drain?wait=true for hooks (extproc/drain/routes.ts).
 */
export const PRESTOP_DRAIN_PATH = "/drain/prestop";
const ENVOY_CONFIG_DIR = "/etc/meshext";

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

/**
 * Both sidecars block in preStop until the drain finishes: kubelet sends SIGTERM to a container
 * only after its own preStop returns, so without the hook on Envoy it would exit at once and drop
 * in-flight requests. /drain is idempotent, so two callers start one drain.
 */
function drainPreStop(): Record<string, unknown> {
  return { preStop: { httpGet: { path: PRESTOP_DRAIN_PATH, port: SIDECAR_ADMIN_PORT } } };
}

export function renderSidecar(s: InjectSettings): RenderedSidecar {
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
    lifecycle: drainPreStop(),
  };
  const sidecar: Container = {
    name: SIDECAR_CONTAINER,
    image: s.sidecarImage,
    args: [
      "sidecar",
      `--grpc-listen=127.0.0.1:${EXTPROC_GRPC_PORT}`,
      // 0.0.0.0: kubelet calls /ready and the preStop /drain on the pod IP.
      `--admin-listen=0.0.0.0:${SIDECAR_ADMIN_PORT}`,
      `--envoy-admin=http://127.0.0.1:${ENVOY_ADMIN_PORT}`,
      `--drain-time=${formatDurationMs(s.drainTimeMs)}`,
    ],
    env: [
      { name: "MESHEXT_DATAPLANE_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
      { name: "MESHEXT_DATAPLANE_ADDRESS", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
      { name: "NODE_OPTIONS", value: SIDECAR_NODE_OPTIONS.join(" ") },
      ...(s.sidecarControlPlane ? [{ name: "MESHEXT_CONTROL_PLANE", value: s.sidecarControlPlane }] : []),
    ],
    ports: [
      { name: "extproc-grpc", containerPort: EXTPROC_GRPC_PORT, protocol: "TCP" },
      { name: "sidecar-admin", containerPort: SIDECAR_ADMIN_PORT, protocol: "TCP" },
    ],
    // Readiness only: /ready is 503 while draining, which must take the pod out of endpoints,
    // never restart it (so no liveness probe on the same path).
    readinessProbe: { httpGet: { path: "/ready", port: SIDECAR_ADMIN_PORT }, periodSeconds: 5, timeoutSeconds: 3, failureThreshold: 1 },
    resources: meshextResources(),
    securityContext: proxySecurityContext(s.proxyUid),
    lifecycle: drainPreStop(),
  };
  const init: Container = {
    name: INIT_CONTAINER,
    image: s.initImage,
    command: ["/usr/bin/kumactl", "install", "transparent-proxy"],
    args: [
      "--kuma-dp-uid", String(s.proxyUid),
      "--redirect-inbound-port", String(INBOUND_REDIRECT_PORT),
      "--redirect-outbound-port", String(OUTBOUND_REDIRECT_PORT),
      // kubelet's probes and preStop reach the sidecar admin port directly.
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
  const terminationGracePeriodSeconds = Math.ceil((s.drainTimeMs + s.graceMarginMs) / 1000);
  return { envoy, sidecar, init, volume, terminationGracePeriodSeconds };
}
