// Validates one targetRef against the kinds a position allows (reference §1.1 and §1.3, Kuma 2.6).
import { at, Issues, isObj } from "./issues.js";
import type { TargetRef, TargetRefKind } from "./types.js";

export interface TargetRefRules {
  kinds: readonly TargetRefKind[];
  /** MeshGateway may carry listener `tags` (MFI, MRL, MeshHTTPRoute top level). */
  gatewayListenerTags?: boolean;
  /** `proxyTypes` is meaningful only on the top-level targetRef. */
  topLevel?: boolean;
}

const NAME_REQUIRED: ReadonlySet<string> = new Set(["MeshService", "MeshServiceSubset", "MeshGateway", "MeshHTTPRoute"]);
const TAGS_REQUIRED: ReadonlySet<string> = new Set(["MeshSubset", "MeshServiceSubset"]);

export function validateTargetRef(v: unknown, path: string, rules: TargetRefRules, issues: Issues): TargetRef | undefined {
  const ref = issues.obj(v, path);
  if (!ref) return undefined;
  const kind = issues.oneOf(ref.kind, at(path, "kind"), rules.kinds);
  if (!kind) return undefined;
  if (NAME_REQUIRED.has(kind)) issues.str(ref.name, at(path, "name"));
  else if (ref.name !== undefined) issues.add(at(path, "name"), `must not be set with kind ${kind}`);
  if (ref.mesh !== undefined) issues.add(at(path, "mesh"), "must not be set");
  validateTags(ref.tags, kind, path, rules, issues);
  if (ref.proxyTypes !== undefined) {
    if (!rules.topLevel || (kind !== "Mesh" && kind !== "MeshSubset")) {
      issues.add(at(path, "proxyTypes"), `must not be set with kind ${kind}`);
    } else {
      const list = issues.arr(ref.proxyTypes, at(path, "proxyTypes"));
      list?.forEach((p, i) => issues.oneOf(p, at(at(path, "proxyTypes"), i), ["Sidecar", "Gateway"] as const));
    }
  }
  return ref as unknown as TargetRef;
}

function validateTags(tags: unknown, kind: TargetRefKind, path: string, rules: TargetRefRules, issues: Issues): void {
  const field = at(path, "tags");
  if (TAGS_REQUIRED.has(kind)) {
    issues.stringMap(tags, field, true, true);
    return;
  }
  if (tags === undefined) return;
  if (kind === "MeshGateway" && rules.gatewayListenerTags) {
    issues.stringMap(tags, field, false);
    return;
  }
  if (isObj(tags) && Object.keys(tags).length === 0) return;
  issues.add(field, `must not be set with kind ${kind}`);
}

/**
 * MFI/MRL "gateway scope" (2.6): a top-level ref includes gateways when it is MeshGateway, or Mesh/MeshSubset
 * without proxyTypes or with Gateway among them.
 */
export function scopeIncludesGateways(ref: TargetRef): boolean {
  if (ref.kind === "MeshGateway") return true;
  if (ref.kind !== "Mesh" && ref.kind !== "MeshSubset") return false;
  const types = ref.proxyTypes;
  return !types || types.length === 0 || types.includes("Gateway");
}
