// Validation of MeshIdentity and MeshTrust in Kuma's universal shape ({type, mesh, name, spec, status}): the
// engine's own resource reader (policy/documents/resources.ts, Kuma's validators at v2.14.3), so the control
// plane's PUT, its seeding, the sidecar's fetch and a policy directory accept and refuse the same documents.
import { resourceFromObject } from "../policy/documents/resources.js";
import type { Violation } from "../policy/model/types.js";
import { IDENTITY_TYPES } from "./resources.js";

export function isIdentityKind(kind: unknown): boolean {
  return IDENTITY_TYPES.some((t) => t.kind === kind);
}

/** Every violation of a MeshIdentity / MeshTrust document (paths start at `spec`); empty means valid. */
export function identityResourceViolations(doc: Record<string, unknown>): Violation[] {
  if (!isIdentityKind(doc.type)) return [{ field: "type", message: `must be one of ${IDENTITY_TYPES.map((t) => t.kind).join(", ")}` }];
  return resourceFromObject(doc).violations;
}
