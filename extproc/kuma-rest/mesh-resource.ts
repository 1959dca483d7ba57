// Kuma's Mesh resource in its universal (flattened) form: validation with Kuma's field paths
// (`pkg/core/resources/apis/mesh/mesh_validator.go` @v2.14.3, the parts that matter here). Pure: shared by
// the control plane's PUT and the sidecar's fetch; the engine reads the mTLS state (policy/documents/resources.ts).
import { at, isObj, Issues } from "../policy/documents/issues.js";
import type { Violation } from "../policy/model/types.js";

/** CA backend types Kuma 2.14 knows (`mesh_proto` CertificateAuthorityBackend). */
const CA_TYPES = ["builtin", "provided", "vault", "acmpca", "certmanager"] as const;
const MESH_SERVICES_MODES = ["Disabled", "Everywhere", "ReachableBackends", "Exclusive"] as const;
/** Top-level fields of a universal Mesh (the Mesh proto's fields plus the resource envelope). */
const KNOWN_FIELDS = new Set([
  "type", "name", "labels", "creationTime", "modificationTime", "kri",
  "mtls", "tracing", "logging", "metrics", "networking", "routing", "constraints", "meshServices", "skipCreatingInitialPolicies",
]);

/** Every violation of a Mesh PUT at /meshes/{name}; empty means valid. */
export function meshViolations(name: string, doc: unknown): Violation[] {
  if (!isObj(doc)) return [{ field: "", message: "must be a mapping with type and name" }];
  const issues = new Issues();
  if (doc.type !== "Mesh") issues.add("type", "must be Mesh at /meshes/{name}");
  if (doc.name !== name) issues.add("name", "name from the URL has to be the same as in body");
  if (doc.mesh !== undefined) issues.add("mesh", "must not be set: a Mesh is global");
  if (doc.spec !== undefined) issues.add("spec", "must not be set: a universal Mesh is flat (mtls, meshServices, … at the top level)");
  for (const key of Object.keys(doc)) {
    if (!KNOWN_FIELDS.has(key) && key !== "spec" && key !== "mesh") issues.add(key, "unknown field");
  }
  if (doc.labels !== undefined) issues.stringMap(doc.labels, "labels", false);
  mtlsViolations(issues, doc.mtls);
  const meshServices = issues.obj(doc.meshServices, "meshServices", false);
  if (meshServices) issues.oneOf(meshServices.mode, "meshServices.mode", MESH_SERVICES_MODES, false);
  issues.bool(doc.skipCreatingInitialPolicies, "skipCreatingInitialPolicies");
  return issues.list;
}

function mtlsViolations(issues: Issues, value: unknown): void {
  const mtls = issues.obj(value, "mtls", false);
  if (!mtls) return;
  const backends = issues.arr(mtls.backends, "mtls.backends", false) ?? [];
  if (backends.length > 1) issues.add("mtls.backends", "cannot have more than 1 backends");
  const names = new Set<string>();
  backends.forEach((b, i) => {
    const path = at("mtls.backends", i);
    const backend = issues.obj(b, path);
    if (!backend) return;
    const backendName = issues.str(backend.name, at(path, "name"));
    if (backendName !== undefined && names.has(backendName)) issues.add(at(path, "name"), `"${backendName}" name is already used for another backend`);
    if (backendName !== undefined) names.add(backendName);
    issues.oneOf(backend.type, at(path, "type"), CA_TYPES);
    if (backend.mode !== undefined) issues.oneOf(backend.mode, at(path, "mode"), ["STRICT", "PERMISSIVE"] as const);
  });
  const enabled = mtls.enabledBackend;
  if (enabled !== undefined && typeof enabled !== "string") issues.add("mtls.enabledBackend", "must be a string");
  else if (enabled && !names.has(enabled)) issues.add("mtls.enabledBackend", "has to be set to one of the backends in the mesh");
}
