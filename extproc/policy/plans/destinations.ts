// Outbound destinations as real resources (2.7+): which MeshService / MeshExternalService /
// MeshMultiZoneService an :authority names (its hostnames, VIPs, endpoints, or its name), on which port, and
// whether a `to[].targetRef` resolves to it (name + namespace, or labels; sectionName = port name, else the
// number as text; resolve/targetref.go at v2.14.3). Pure logic over the resources given to the engine.
import { portSectionName, type MeshResources, type ServicePort, type ServiceResource } from "../documents/resources.js";
import type { Policy, TargetRef } from "../model/types.js";

export interface Destination {
  service: ServiceResource;
  port?: ServicePort;
  /** Cache key: kind/name:section. */
  key: string;
}

/** The resource an outbound :authority addresses in `mesh`, if one of the given resources claims it. */
export function resolveDestination(authority: string, resources: MeshResources, mesh: string): Destination | undefined {
  const m = /^(\[[^\]]*\]|[^:]+)(?::(\d+))?$/.exec(authority.toLowerCase());
  if (!m || resources.services.length === 0) return undefined;
  const host = m[1]!.replace(/^\[|\]$/g, "");
  const portNum = m[2] !== undefined ? Number(m[2]) : undefined;
  const bare = host.endsWith(".mesh") ? host.slice(0, -5) : host;
  const service =
    resources.services.find((s) => s.mesh === mesh && s.hosts.includes(host)) ??
    resources.services.find((s) => s.mesh === mesh && (s.displayName === bare || s.name === bare));
  if (!service) return undefined;
  const port = portNum !== undefined ? service.ports.find((p) => p.port === portNum) : service.ports.length === 1 ? service.ports[0] : undefined;
  return { service, ...(port ? { port } : {}), key: `${service.kind}/${service.name}:${port ? portSectionName(port) : ""}` };
}

/** Kubernetes kuma.io/service names `<svc>_<ns>_svc_<port>`: back-compat names of a MeshService port. */
const LEGACY_SERVICE_NAME = /^(.+)_([^_]+)_svc_(\d+)$/;

/** Whether a `to[].targetRef` of `policy` resolves to `dest`. */
export function refResolvesTo(ref: TargetRef, policy: Policy, dest: Destination): boolean {
  const s = dest.service;
  if (ref.kind !== s.kind) return false;
  if (ref.labels !== undefined) {
    if (!Object.entries(ref.labels).every(([k, v]) => s.labels[k] === v)) return false;
  } else if (ref.name !== undefined) {
    const legacy = ref.kind === "MeshService" && ref.sectionName === undefined ? LEGACY_SERVICE_NAME.exec(ref.name) : null;
    if (legacy && s.displayName === legacy[1] && s.namespace === legacy[2]) return dest.port?.port === Number(legacy[3]);
    if (s.displayName !== ref.name || (ref.namespace ?? policy.k8sNamespace) !== s.namespace) return false;
  } else return false;
  if (ref.sectionName === undefined) return true;
  return dest.port !== undefined && portSectionName(dest.port) === ref.sectionName;
}
