// Validates one targetRef as Kuma 3.0 (its main branch) does: a ref is `kind`, `labels` and `sectionName` only
// (ValidateTargetRef in pkg/core/resources/apis/mesh/validators.go and api/common/v1alpha1/targetref.go on
// Kuma's master branch). Kuma drops the removed fields unread; meshext rejects them, because a `name` dropped
// from a Dataplane ref would make the policy select every Dataplane.
import { at, Issues, isObj, type Obj } from "./issues.js";
import type { TargetRef, TargetRefKind } from "../model/types.js";

/** Fields a targetRef had up to 2.14 and no longer has in 3.0 (kumahq/kuma #17761, #17668, #18031). */
export const REMOVED_REF_FIELDS = ["name", "namespace", "mesh", "tags", "proxyTypes"] as const;
export const REMOVED_REF_FIELD_MESSAGE = "removed in Kuma 3.0: a targetRef selects by 'labels' (and 'sectionName') only";

/** Kinds whose refs must carry `labels`, and of those the ones that take no `sectionName`. */
const LABELS_REQUIRED: ReadonlySet<string> = new Set(["MeshService", "MeshExternalService", "MeshMultiZoneService", "MeshHTTPRoute"]);
const NO_SECTION: ReadonlySet<string> = new Set(["Mesh", "MeshExternalService", "MeshHTTPRoute"]);

export interface LabelsRefRules {
  kinds: readonly TargetRefKind[];
  /** The policy affects inbounds: a Dataplane ref may carry `sectionName`. */
  inboundPolicy?: boolean;
}

export function validateLabelsRef(ref: Obj, path: string, rules: LabelsRefRules, issues: Issues): TargetRef | undefined {
  for (const field of REMOVED_REF_FIELDS) if (ref[field] !== undefined) issues.add(at(path, field), REMOVED_REF_FIELD_MESSAGE);
  if (ref.kind === undefined || ref.kind === "") {
    issues.add(at(path, "kind"), "must be defined");
    return undefined;
  }
  if (typeof ref.kind !== "string" || !(rules.kinds as readonly string[]).includes(ref.kind)) {
    issues.add(at(path, "kind"), `value '${String(ref.kind)}' is not supported`);
    return undefined;
  }
  const kind = ref.kind as TargetRefKind;
  const labels = ref.labels === undefined ? undefined : issues.stringMap(ref.labels, at(path, "labels"), false);
  const section = ref.sectionName === undefined ? undefined : issues.str(ref.sectionName, at(path, "sectionName"), false);
  const hasLabels = isObj(labels) && Object.keys(labels).length > 0;
  if (kind === "Mesh" && hasLabels) issues.add(at(path, "labels"), "must not be set with kind Mesh");
  if (NO_SECTION.has(kind) && section) issues.add(at(path, "sectionName"), `must not be set with kind ${kind}`);
  if (LABELS_REQUIRED.has(kind) && !hasLabels) issues.add(at(path, "labels"), `must be set when kind is ${kind}`);
  if (kind === "Dataplane" && section && !rules.inboundPolicy) issues.add(at(path, "sectionName"), "can only be used with inbound policies");
  return ref as unknown as TargetRef;
}
