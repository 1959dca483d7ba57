// What a PUT body must satisfy: the policy engine's own validator for policies and the inject command's own
// ContainerPatch parser (the ones the clients run, so server and client never disagree), the Mesh,
// service-resource and MeshIdentity / MeshTrust validators the sidecar also runs, a Dataplane check, and URL/body agreement.
import { isResourceName } from "../policy/documents/resource-name.js";
import { parseContainerPatch } from "../inject/container-patch.js";
import { versionTraits, type KumaVersion } from "../policy/model/kuma-version.js";
import { INBOUND_STATES } from "../policy/model/dataplane.js";
import { validatePolicyObject } from "../policy/documents/parse.js";
import { meshViolations } from "../kuma-rest/mesh-resource.js";
import { CONTAINER_PATCH_TYPE, DATAPLANE_TYPE, MESH_TYPE, type ResourceType, SERVICE_TYPES } from "../kuma-rest/resources.js";
import { serviceResourceViolations } from "../kuma-rest/service-resources.js";
import { identityResourceViolations, isIdentityKind } from "../kuma-rest/identity-resources.js";
import { TEMP_PREFIX } from "../atomic-file.js";
import type { Violation } from "./problems.js";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Longest name the store can keep: each resource is the file `<name>.yaml`, written through a temp file
 * `.tmp-<name>.yaml.<pid>.<8 hex>`, and most file systems allow 255 bytes per file name (Kuma allows 253).
 */
export const MAX_STORED_NAME_CHARS = 255 - `${TEMP_PREFIX}.yaml.4194304.12345678`.length;

/** Checks that a name from the URL can be a resource name (and hence a file name). */
export function nameViolations(field: string, value: string): Violation[] {
  if (!isResourceName(value)) {
    return [{ field, message: "must be 1-253 characters of letters, digits, '.', '_' or '-', starting and ending with a letter or digit" }];
  }
  if (value.length > MAX_STORED_NAME_CHARS) {
    return [{ field, message: `must be at most ${MAX_STORED_NAME_CHARS} characters here: the control plane stores each resource in a file named after it` }];
  }
  return [];
}

/**
 * A mesh name is also a directory (`meshes/{mesh}/`) beside the Mesh files (`meshes/{name}.yaml`): a mesh
 * named `coll.yaml` would collide with the Mesh `coll`, so names ending in `.yaml` are refused.
 */
export function meshNameViolations(field: string, value: string): Violation[] {
  const base = nameViolations(field, value);
  if (base.length > 0 || !value.endsWith(".yaml")) return base;
  return [{ field, message: "must not end in .yaml: the control plane stores Mesh `x` as the file x.yaml beside the directory of mesh `x.yaml`" }];
}

/** Every violation of a resource PUT at /meshes/{mesh}/{type.plural}/{name} (policies by `kumaVersion`'s rules); empty means valid. */
export function validateResource(type: ResourceType, mesh: string, name: string, doc: unknown, kumaVersion?: KumaVersion): Violation[] {
  if (!isObj(doc)) return [{ field: "", message: "must be a mapping with type, mesh, name" }];
  const out: Violation[] = [];
  if (doc.type !== type.kind) out.push({ field: "type", message: `must be ${type.kind} at /meshes/{mesh}/${type.plural}` });
  if (doc.mesh !== undefined && doc.mesh !== mesh) out.push({ field: "mesh", message: "mesh from the URL has to be the same as in body" });
  if (doc.name !== name) out.push({ field: "name", message: "name from the URL has to be the same as in body" });
  if (type === DATAPLANE_TYPE) return [...out, ...dataplaneViolations(doc, kumaVersion)];
  const { violations } = SERVICE_TYPES.includes(type)
    ? { violations: serviceResourceViolations(type.kind, doc) }
    : isIdentityKind(type.kind)
      ? { violations: doc.type === type.kind ? identityResourceViolations({ ...doc, mesh }) : [] }
      : validatePolicyObject({ ...doc, mesh }, kumaVersion);
  const seen = new Set(out.map((v) => v.field));
  return [...out, ...violations.filter((v) => !seen.has(v.field))];
}

/** Every violation of a global resource PUT at /{type.plural}/{name}; empty means valid. */
export function validateGlobalResource(type: ResourceType, name: string, doc: unknown): Violation[] {
  if (type === MESH_TYPE) return meshViolations(name, doc);
  if (type !== CONTAINER_PATCH_TYPE) return [{ field: "type", message: `${type.kind} cannot be written` }];
  return containerPatchViolations(name, doc);
}

/**
 * A ContainerPatch in Kuma's universal form {type, name, spec}: no mesh (it is global), no Kubernetes envelope
 * (whose metadata.name would win over name in the parser), and whatever `meshext inject` would refuse.
 */
export function containerPatchViolations(name: string, doc: unknown): Violation[] {
  if (!isObj(doc)) return [{ field: "", message: "must be a mapping with type, name, spec" }];
  const out: Violation[] = [];
  if (doc.type !== CONTAINER_PATCH_TYPE.kind) out.push({ field: "type", message: `must be ${CONTAINER_PATCH_TYPE.kind} at /${CONTAINER_PATCH_TYPE.plural}` });
  if (doc.name !== name) out.push({ field: "name", message: "name from the URL has to be the same as in body" });
  if (doc.mesh !== undefined) out.push({ field: "mesh", message: "must not be set: a ContainerPatch is global, outside any mesh" });
  for (const field of ["apiVersion", "kind", "metadata"]) {
    if (doc[field] !== undefined) out.push({ field, message: "must not be set: the REST API takes the universal form (type, name, spec)" });
  }
  if (!isObj(doc.spec)) out.push({ field: "spec", message: "must be a mapping with sidecarPatch, meshextSidecarPatch and/or initPatch" });
  const parsed = parseContainerPatch(doc);
  const seen = new Set(out.map((v) => v.field));
  return parsed.ok ? out : [...out, ...parsed.violations.filter((v) => !seen.has(v.field))];
}

/**
 * The part of Kuma's Dataplane validation meshext relies on: an address and inbounds, tagged with
 * kuma.io/service up to 2.14 (Kuma 3.0 removed inbound tags: UPGRADE.md "Inbound `tags` removed from `Dataplane`").
 */
export function dataplaneViolations(doc: Obj, kumaVersion?: KumaVersion): Violation[] {
  const tagsRequired = versionTraits(kumaVersion).inboundTagsRequired;
  const out: Violation[] = [];
  const net = doc.networking;
  if (!isObj(net)) return [{ field: "networking", message: "must be defined" }];
  if (typeof net.address !== "string" || net.address === "") out.push({ field: "networking.address", message: "must be a non-empty string" });
  if (net.inbound === undefined && net.gateway === undefined) out.push({ field: "networking", message: "has to contain at least one inbound interface or gateway" });
  if (net.inbound !== undefined && !Array.isArray(net.inbound)) out.push({ field: "networking.inbound", message: "must be a list" });
  if (Array.isArray(net.inbound)) {
    net.inbound.forEach((ib: unknown, i) => {
      const at = `networking.inbound[${i}]`;
      if (!isObj(ib)) return void out.push({ field: at, message: "must be a mapping" });
      if (!Number.isInteger(ib.port) || (ib.port as number) < 1 || (ib.port as number) > 65535) {
        out.push({ field: `${at}.port`, message: "port must be in the range from 1 to 65535" });
      }
      if (ib.state !== undefined && !(INBOUND_STATES as readonly unknown[]).includes(ib.state)) {
        out.push({ field: `${at}.state`, message: `must be one of ${INBOUND_STATES.join(", ")}` });
      }
      if (!tagsRequired && ib.tags === undefined) return;
      if (!isObj(ib.tags)) return void out.push({ field: `${at}.tags`, message: tagsRequired ? "must be a mapping with at least kuma.io/service" : "must be a mapping" });
      if (tagsRequired && (typeof ib.tags["kuma.io/service"] !== "string" || ib.tags["kuma.io/service"] === "")) {
        out.push({ field: `${at}.tags["kuma.io/service"]`, message: "tag has to exist" });
      }
      for (const [k, v] of Object.entries(ib.tags)) {
        if (typeof v !== "string") out.push({ field: `${at}.tags["${k}"]`, message: "tag value must be a string" });
      }
    });
  }
  return out;
}
