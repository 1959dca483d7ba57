// Seeds an empty control-plane store from a directory of Kuma YAML (the repo's envoy/policies/ for
// `meshext up`): policies through the same parser/validator as PUT, and the Mesh, service (MeshService,
// MeshExternalService, MeshMultiZoneService) and identity (MeshIdentity, MeshTrust) resources through theirs;
// invalid documents are logged and skipped.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { meshViolations } from "../kuma-rest/mesh-resource.js";
import { type GlobalResource, IDENTITY_TYPES, MESH_TYPE, POLICY_TYPES, type Resource, SERVICE_TYPES } from "../kuma-rest/resources.js";
import { identityResourceViolations, isIdentityKind } from "../kuma-rest/identity-resources.js";
import { serviceResourceViolations } from "../kuma-rest/service-resources.js";
import type { Logger } from "../log.js";
import { isObj } from "../policy/documents/issues.js";
import type { KumaVersion } from "../policy/model/kuma-version.js";
import { parseDocuments, parsePolicyText } from "../policy/documents/parse.js";
import type { ResourceStore } from "./store.js";

/** True when the store holds no policy of any supported kind. */
export function hasNoPolicies(store: ResourceStore): boolean {
  return POLICY_TYPES.every((t) => store.list(t.kind).length === 0);
}

const isResourceKind = (kind: unknown) => kind === MESH_TYPE.kind || SERVICE_TYPES.some((t) => t.kind === kind) || isIdentityKind(kind);

/** Stores every valid document of every *.yaml / *.yml / *.json file in `dir`; returns how many were stored. */
export async function seedFromDir(store: ResourceStore, dir: string, log: Logger, kumaVersion?: KumaVersion): Promise<number> {
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => /\.(ya?ml|json)$/.test(f)).sort();
  } catch (err) {
    log.warn({ dir, err: (err as Error).message }, "no sample policies to seed the control plane with");
    return 0;
  }
  let stored = 0;
  for (const file of files) {
    const path = join(dir, file);
    const text = await readFile(path, "utf8");
    stored += await seedResources(store, text, path, log);
    const { policies, rejected } = parsePolicyText(text, path, { kumaVersion });
    for (const r of rejected) {
      if (!isResourceKind(r.kind)) log.warn({ file: path, index: r.index, kind: r.kind, name: r.name, violations: r.violations }, "sample policy rejected");
    }
    for (const p of policies) {
      const type = POLICY_TYPES.find((t) => t.kind === p.type)!;
      const resource: Resource = { type: p.type, mesh: p.mesh, name: p.name, ...(Object.keys(p.labels).length ? { labels: p.labels } : {}), spec: p.spec as unknown as Record<string, unknown> };
      await store.put(type, resource);
      stored++;
    }
  }
  log.info({ dir, resources: stored }, "seeded the control plane with the sample policies and resources");
  return stored;
}

/** The Mesh and service documents of one file, stored as written (universal form). */
async function seedResources(store: ResourceStore, text: string, path: string, log: Logger): Promise<number> {
  let stored = 0;
  for (const doc of parseDocuments(text)) {
    const value = doc.value;
    if (!isObj(value) || !isResourceKind(value.type) || typeof value.name !== "string") continue;
    if (value.type === MESH_TYPE.kind) {
      const violations = meshViolations(value.name, value);
      if (violations.length) log.warn({ file: path, kind: value.type, name: value.name, violations }, "sample Mesh rejected");
      else {
        await store.putGlobal(MESH_TYPE, value as GlobalResource);
        stored++;
      }
      continue;
    }
    const type = [...SERVICE_TYPES, ...IDENTITY_TYPES].find((t) => t.kind === value.type)!;
    const resource = { ...value, mesh: typeof value.mesh === "string" ? value.mesh : "default" } as Resource;
    const violations = isIdentityKind(type.kind) ? identityResourceViolations(resource) : serviceResourceViolations(type.kind, resource);
    if (violations.length) log.warn({ file: path, kind: value.type, name: value.name, violations }, "sample resource rejected");
    else {
      await store.put(type, resource);
      stored++;
    }
  }
  return stored;
}
