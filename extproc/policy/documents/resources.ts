// Non-policy Kuma resources the engine decides with: Mesh (is mTLS on?), MeshIdentity (does this proxy have a
// workload identity?), MeshTrust (which peer trust domains does it accept?) and the service kinds `to[]` refs resolve against (MeshService, MeshExternalService,
// MeshMultiZoneService), read from universal or CRD form.
import { LABEL } from "../model/dataplane.js";
import { at, dropNulls, Issues, isObj, type Obj } from "./issues.js";
import { meshIdentityFromSpec, type MeshIdentityResource, meshTrustFromSpec, type MeshTrustResource } from "./mesh-identity.js";
import { meshIdentityViolations, meshTrustViolations } from "./mesh-identity-validate.js";
import type { Violation } from "../model/types.js";

export const RESOURCE_KINDS = ["Mesh", "MeshService", "MeshExternalService", "MeshMultiZoneService", "MeshIdentity", "MeshTrust"] as const;
export type ResourceKind = (typeof RESOURCE_KINDS)[number];
export type ServiceKind = Exclude<ResourceKind, "Mesh" | "MeshIdentity" | "MeshTrust">;

export interface MeshResource {
  kind: "Mesh";
  name: string;
  labels: Record<string, string>;
  /** `mtls.enabledBackend` is set. */
  mtlsEnabled: boolean;
}

export interface ServicePort {
  port: number;
  /** Port name; Kuma's section name of an unnamed port is its number as text. */
  name?: string;
  appProtocol?: string;
}

/** A MeshService / MeshExternalService / MeshMultiZoneService as `to[]` resolution needs it. */
export interface ServiceResource {
  kind: ServiceKind;
  mesh: string;
  /** Resource name (Kubernetes: `name.namespace`). */
  name: string;
  /** `kuma.io/display-name` label, else the name (Kubernetes: metadata.name). */
  displayName: string;
  namespace?: string;
  zone?: string;
  labels: Record<string, string>;
  ports: ServicePort[];
  /** Hostnames and VIPs an outbound :authority may use for it (status.addresses, status.vips, endpoints). */
  hosts: string[];
  /** Raw object, for inspect output. */
  spec: Obj;
}

export type Resource = MeshResource | ServiceResource | MeshIdentityResource | MeshTrustResource;

/** The resources given to the engine next to the policies. */
export interface MeshResources {
  meshes: MeshResource[];
  services: ServiceResource[];
  /** 2.12+ workload identities; optional for callers that have none. */
  identities?: MeshIdentityResource[];
  /** 2.12+ trust domains (MeshTrust); optional as identities. */
  trusts?: MeshTrustResource[];
}

export const NO_RESOURCES: MeshResources = { meshes: [], services: [] };

/** Groups a flat list (as a policy directory yields it) into MeshResources. */
export function resourcesOf(list: readonly Resource[]): MeshResources {
  const out: MeshResources = { meshes: [], services: [], identities: [], trusts: [] };
  for (const r of list) {
    if (r.kind === "Mesh") out.meshes.push(r);
    else if (r.kind === "MeshIdentity") out.identities!.push(r);
    else if (r.kind === "MeshTrust") out.trusts!.push(r);
    else out.services.push(r);
  }
  return out;
}

export function isResourceDocument(doc: unknown): boolean {
  if (!isObj(doc)) return false;
  const kind = doc.type ?? doc.kind;
  return typeof kind === "string" && (RESOURCE_KINDS as readonly string[]).includes(kind);
}

/** Reads one resource document; violations instead of throwing. */
export function resourceFromObject(doc: unknown): { resource?: Resource; violations: Violation[] } {
  const issues = new Issues();
  const o = issues.obj(doc, "document");
  if (!o) return { violations: issues.list };
  const crd = o.type === undefined;
  const kind = issues.oneOf(crd ? o.kind : o.type, crd ? "kind" : "type", RESOURCE_KINDS);
  const meta = crd ? (issues.obj(o.metadata, "metadata") ?? {}) : o;
  const shortName = issues.str(meta.name, crd ? "metadata.name" : "name") ?? "";
  const namespace = crd ? issues.str(meta.namespace, "metadata.namespace", false) : undefined;
  const labels = issues.stringMap(meta.labels, crd ? "metadata.labels" : "labels", false) ?? {};
  const spec = (dropNulls(crd || kind !== "Mesh" ? o.spec : o) ?? {}) as Obj;
  // universal form: `mesh: 123` (YAML reads a number) is rejected as in a policy, not read as the default mesh
  const meshField = crd || kind === "Mesh" ? undefined : issues.str(o.mesh, "mesh", false);
  if (!kind || issues.list.length > 0) return { violations: issues.list };
  if (kind === "Mesh") {
    const mtls = isObj(spec.mtls) ? spec.mtls : {};
    // Kuma's mesh_validator.go: the enabled backend must be one of the mesh's backends (else it is rejected
    // and its last good version stays: reading it as "mTLS off" would allow everything).
    const mtlsPath = crd ? "spec.mtls" : "mtls";
    if (spec.mtls !== undefined && !isObj(spec.mtls)) issues.add(mtlsPath, "must be a mapping");
    const backendNames = (Array.isArray(mtls.backends) ? mtls.backends : []).map((b) => (isObj(b) ? b.name : undefined));
    if (mtls.enabledBackend !== undefined && typeof mtls.enabledBackend !== "string") issues.add(`${mtlsPath}.enabledBackend`, "must be a string");
    else if (mtls.enabledBackend && !backendNames.includes(mtls.enabledBackend)) issues.add(`${mtlsPath}.enabledBackend`, "has to be set to one of the backends in the mesh");
    if (issues.list.length > 0) return { violations: issues.list };
    return { resource: { kind, name: shortName, labels, mtlsEnabled: typeof mtls.enabledBackend === "string" && mtls.enabledBackend !== "" }, violations: [] };
  }
  const mesh = (crd ? labels[LABEL.mesh] : meshField) ?? "default";
  const name = namespace ? `${shortName}.${namespace}` : shortName;
  if (kind === "MeshIdentity" || kind === "MeshTrust") {
    // Kuma's validators, the one check for every source (directory, control plane PUT, sidecar fetch).
    if (!isObj(spec)) return { violations: [{ field: "spec", message: "must be an object" }] };
    const checked = kind === "MeshIdentity" ? meshIdentityViolations(spec, issues) : meshTrustViolations(spec, issues);
    if (checked.list.length > 0) return { violations: checked.list };
    return { resource: kind === "MeshIdentity" ? meshIdentityFromSpec(mesh, name, spec, o.status) : meshTrustFromSpec(mesh, name, spec), violations: [] };
  }
  const ns = labels[LABEL.namespace] ?? namespace;
  const svc: ServiceResource = {
    kind,
    mesh,
    name,
    displayName: labels[LABEL.displayName] ?? shortName,
    labels: { ...labels },
    ports: servicePorts(kind, spec, issues),
    hosts: serviceHosts(o, spec),
    spec,
  };
  if (ns) svc.namespace = ns;
  if (labels[LABEL.zone]) svc.zone = labels[LABEL.zone];
  if (issues.list.length > 0) return { violations: issues.list };
  return { resource: svc, violations: [] };
}

function servicePorts(kind: ServiceKind, spec: Obj, issues: Issues): ServicePort[] {
  if (kind === "MeshExternalService") {
    const match = isObj(spec.match) ? spec.match : {};
    const port = issues.int(match.port, "spec.match.port", 1, 65535);
    return port === undefined ? [] : [{ port, ...(typeof match.protocol === "string" ? { appProtocol: match.protocol } : {}) }];
  }
  const list = issues.arr(spec.ports, "spec.ports", false) ?? [];
  const out: ServicePort[] = [];
  list.forEach((raw, i) => {
    const p = issues.obj(raw, at("spec.ports", i));
    if (!p) return;
    const port = issues.int(p.port, at(at("spec.ports", i), "port"), 1, 65535);
    if (port === undefined) return;
    out.push({ port, ...(typeof p.name === "string" ? { name: p.name } : {}), ...(typeof p.appProtocol === "string" ? { appProtocol: p.appProtocol } : {}) });
  });
  return out;
}

function serviceHosts(o: Obj, spec: Obj): string[] {
  const hosts: string[] = [];
  const status = isObj(o.status) ? o.status : {};
  for (const a of Array.isArray(status.addresses) ? status.addresses : []) if (isObj(a) && typeof a.hostname === "string") hosts.push(a.hostname.toLowerCase());
  for (const v of Array.isArray(status.vips) ? status.vips : []) if (isObj(v) && typeof v.ip === "string") hosts.push(v.ip);
  if (isObj(status.vip) && typeof status.vip.ip === "string") hosts.push(status.vip.ip);
  for (const e of Array.isArray(spec.endpoints) ? spec.endpoints : []) if (isObj(e) && typeof e.address === "string") hosts.push(e.address.toLowerCase());
  return hosts;
}

/** The section name of a service port: its name, else its number (meshservice/api/v1alpha1/helpers.go). */
export function portSectionName(p: ServicePort): string {
  return p.name ?? String(p.port);
}

/** mTLS state of `mesh`: undefined when no Mesh resource of that name was given (legacy behaviour). */
export function meshMtls(resources: MeshResources, mesh: string): boolean | undefined {
  return resources.meshes.find((m) => m.name === mesh)?.mtlsEnabled;
}
