// What injection reads from the pod itself: its identity as Kuma names it on Kubernetes (kuma.io/service
// from the workload's labels and namespace), its mesh, the app's ports, and the app's probes with the
// edits that rewrite them to the sidecar's probe port (or restore them when the workload opts out). Pure.
import { isObject } from "./json.js";
import type { Edit } from "./plan.js";
import { type PodFacts, INJECTED_LABEL, LEGACY_CONTAINERS, SIDECAR_CONTAINER } from "./render.js";
import { parseVirtualPath, type VirtualProbe, virtualPath } from "../probes/virtual-path.js";
import type { Workload } from "./workload.js";

/** Overrides the kuma.io/service tag derived from the labels. */
export const SERVICE_ANNOTATION = "meshext.io/service";
/** The app port meshed when the pod has several (meshext meshes one inbound port per pod). */
export const INBOUND_PORT_ANNOTATION = "meshext.io/inbound-port";
/** Kuma's mesh annotation: the sidecar's --mesh. */
export const MESH_ANNOTATION = "kuma.io/mesh";
/** "false"/"disabled" leaves the app's probes as written (Kuma's kuma.io/virtual-probes: disabled too). */
export const VIRTUAL_PROBES_ANNOTATION = "meshext.io/virtual-probes";
const KUMA_VIRTUAL_PROBES_ANNOTATION = "kuma.io/virtual-probes";
const PROBE_KEYS = ["livenessProbe", "readinessProbe", "startupProbe"] as const;
/** A Kuma tag value or a DNS-ish name: no separators of the k=v,k=v tag list. */
const TAG_VALUE = /^[A-Za-z0-9][-A-Za-z0-9_.]*$/;

export type FactsResult = { ok: true; facts: PodFacts; probeEdits: Edit[] } | { ok: false; message: string };

export interface FactOptions {
  probePort: number;
  virtualProbes: boolean;
  /** The request's namespace (webhook) when the object names none. */
  namespace?: string;
}

/** Pods made by a ReplicaSet are named "web-7d4b9c-" + random: drop the generated suffixes. */
function baseOfGenerateName(generateName: string): string {
  return generateName.replace(/-$/, "").replace(/-[a-z0-9]{5,10}$/, "");
}

function appContainers(w: Workload): { c: Record<string, unknown>; index: number }[] {
  const ours = new Set<string>([SIDECAR_CONTAINER, ...LEGACY_CONTAINERS]);
  const list = Array.isArray(w.podSpec.containers) ? w.podSpec.containers : [];
  return list.flatMap((c, index) => (isObject(c) && !ours.has(c.name as string) ? [{ c, index }] : []));
}

function tcpPorts(c: Record<string, unknown>): { name?: string; port: number }[] {
  if (!Array.isArray(c.ports)) return [];
  return c.ports.flatMap((p) =>
    isObject(p) && Number.isInteger(p.containerPort) && (p.protocol === undefined || p.protocol === "TCP")
      ? [{ ...(typeof p.name === "string" ? { name: p.name } : {}), port: p.containerPort as number }]
      : [],
  );
}

function resolvePort(c: Record<string, unknown>, port: unknown): number | undefined {
  if (Number.isInteger(port)) return port as number;
  if (typeof port === "string" && /^\d+$/.test(port)) return Number(port);
  if (typeof port === "string") return tcpPorts(c).find((p) => p.name === port)?.port;
  return undefined;
}

/** The app's probe as a VirtualProbe; undefined for exec probes, probes to another host, unresolvable ports. */
function virtualOf(c: Record<string, unknown>, probe: Record<string, unknown>, probePort: number): { probe: VirtualProbe; rewritten: boolean } | undefined {
  const { httpGet, tcpSocket, grpc } = probe;
  if (isObject(httpGet)) {
    if (httpGet.host !== undefined && httpGet.host !== "") return undefined;
    const port = resolvePort(c, httpGet.port);
    if (port === undefined) return undefined;
    const path = typeof httpGet.path === "string" && httpGet.path !== "" ? httpGet.path : "/";
    if (port === probePort && (httpGet.scheme === undefined || httpGet.scheme === "HTTP")) {
      const known = parseVirtualPath(path);
      if (known) return { probe: known, rewritten: true };
    }
    const kind = httpGet.scheme === "HTTPS" ? "https" : "http";
    return { probe: { kind, port, path: path.startsWith("/") ? path : `/${path}` }, rewritten: false };
  }
  if (isObject(tcpSocket)) {
    if (tcpSocket.host !== undefined && tcpSocket.host !== "") return undefined;
    const port = resolvePort(c, tcpSocket.port);
    return port === undefined ? undefined : { probe: { kind: "tcp", port }, rewritten: false };
  }
  if (isObject(grpc)) {
    if (!Number.isInteger(grpc.port)) return undefined;
    return { probe: { kind: "grpc", port: grpc.port as number, service: typeof grpc.service === "string" ? grpc.service : "" }, rewritten: false };
  }
  return undefined;
}

/** The probe with its handler replaced in place (key order kept). */
function withHandler(probe: Record<string, unknown>, handler: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let placed = false;
  for (const [k, v] of Object.entries(probe)) {
    if (k === "httpGet" || k === "tcpSocket" || k === "grpc") {
      if (!placed) Object.assign(out, handler);
      placed = true;
    } else out[k] = v;
  }
  return placed ? out : { ...handler, ...out };
}

function headersOf(probe: Record<string, unknown>): Record<string, unknown> {
  const h = isObject(probe.httpGet) ? probe.httpGet.httpHeaders : undefined;
  return Array.isArray(h) && h.length > 0 ? { httpHeaders: h } : {};
}

function rewrittenHandler(p: VirtualProbe, probe: Record<string, unknown>, probePort: number): Record<string, unknown> {
  return { httpGet: { path: virtualPath(p), port: probePort, ...(p.kind === "http" || p.kind === "https" ? headersOf(probe) : {}) } };
}

function originalHandler(p: VirtualProbe, probe: Record<string, unknown>): Record<string, unknown> {
  switch (p.kind) {
    case "http":
    case "https":
      return { httpGet: { path: p.path, port: p.port, ...(p.kind === "https" ? { scheme: "HTTPS" } : {}), ...headersOf(probe) } };
    case "tcp":
      return { tcpSocket: { port: p.port } };
    case "grpc":
      return { grpc: { port: p.port, ...(p.service ? { service: p.service } : {}) } };
  }
}

function disabled(v: unknown): boolean {
  return v === "false" || v === "disabled";
}

export function podFacts(w: Workload, opts: FactOptions): FactsResult {
  const namespace = w.namespace || opts.namespace || "default";
  const apps = appContainers(w);
  const inboundPorts = [...new Set(apps.flatMap(({ c }) => tcpPorts(c).map((p) => p.port)))].sort((a, b) => a - b);

  let appPort: number | undefined;
  const chosen = w.annotations[INBOUND_PORT_ANNOTATION];
  if (chosen !== undefined && chosen !== null) {
    const n = typeof chosen === "string" && /^\d+$/.test(chosen) ? Number(chosen) : NaN;
    if (!inboundPorts.includes(n)) return { ok: false, message: `annotation ${INBOUND_PORT_ANNOTATION} must be one of the app's TCP container ports (${inboundPorts.join(", ") || "none"}), got ${JSON.stringify(chosen)}` };
    appPort = n;
  } else if (inboundPorts.length === 1) {
    appPort = inboundPorts[0];
  } else if (inboundPorts.length > 1) {
    return { ok: false, message: `the app has several TCP ports (${inboundPorts.join(", ")}); meshext meshes one inbound port per pod: name it with the annotation ${INBOUND_PORT_ANNOTATION}` };
  }
  const override = w.annotations[SERVICE_ANNOTATION];
  let service: string;
  if (override !== undefined && override !== null) {
    if (typeof override !== "string" || !TAG_VALUE.test(override)) return { ok: false, message: `annotation ${SERVICE_ANNOTATION} must be a service name (letters, digits, - _ .), got ${JSON.stringify(override)}` };
    service = override;
  } else {
    const labelled = [w.podLabels["app.kubernetes.io/name"], w.podLabels.app].find((v) => typeof v === "string" && v !== "") as string | undefined;
    const base = labelled ?? (w.name || baseOfGenerateName(w.generateName) || "app");
    // Kuma's Kubernetes form: <name>_<namespace>_svc_<port>.
    service = `${base}_${namespace}_svc${appPort !== undefined ? `_${appPort}` : ""}`;
  }
  const tags: [string, string][] = [["kuma.io/service", service], ["k8s.kuma.io/namespace", namespace]];
  for (const key of Object.keys(w.podLabels).sort()) {
    const v = w.podLabels[key];
    if (key === INJECTED_LABEL || key === "kuma.io/service" || typeof v !== "string" || !TAG_VALUE.test(v)) continue;
    tags.push([key, v]);
  }
  const meshAnnotation = w.annotations[MESH_ANNOTATION];
  if (meshAnnotation !== undefined && (typeof meshAnnotation !== "string" || !TAG_VALUE.test(meshAnnotation))) {
    return { ok: false, message: `annotation ${MESH_ANNOTATION} must be a mesh name, got ${JSON.stringify(meshAnnotation)}` };
  }

  const virtualProbes = opts.virtualProbes && !disabled(w.annotations[VIRTUAL_PROBES_ANNOTATION]) && !disabled(w.annotations[KUMA_VIRTUAL_PROBES_ANNOTATION]);
  const probes: VirtualProbe[] = [];
  const probeEdits: Edit[] = [];
  for (const { c, index } of apps) {
    for (const key of PROBE_KEYS) {
      const probe = c[key];
      if (!isObject(probe)) continue;
      const found = virtualOf(c, probe, opts.probePort);
      if (!found) continue;
      const path = [...w.podSpecPath, "containers", index, key];
      if (virtualProbes) {
        probes.push(found.probe);
        if (!found.rewritten) probeEdits.push({ op: "set", path, value: withHandler(probe, rewrittenHandler(found.probe, probe, opts.probePort)) });
      } else if (found.rewritten) {
        probeEdits.push({ op: "set", path, value: withHandler(probe, originalHandler(found.probe, probe)) });
      }
    }
  }
  return {
    ok: true,
    facts: { tags, ...(typeof meshAnnotation === "string" ? { mesh: meshAnnotation } : {}), inboundPorts, ...(appPort !== undefined ? { appPort } : {}), probes, virtualProbes },
    probeEdits,
  };
}
