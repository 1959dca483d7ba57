// Validates one targetRef against the kinds a position allows and the fields the Kuma version knows
// (Kuma 2.6 validators, and ValidateTargetRef in pkg/core/resources/apis/mesh/validators.go at v2.14.3; the
// labels-only refs of 3.0 in validate-labels-ref.ts).
import { at, Issues, isObj, type Obj } from "./issues.js";
import type { VersionTraits } from "../model/kuma-version.js";
import type { TargetRef, TargetRefKind } from "../model/types.js";
import { validateLabelsRef } from "./validate-labels-ref.js";

export interface TargetRefRules {
  kinds: readonly TargetRefKind[];
  /** MeshGateway may carry listener `tags` (MFI, MRL, MeshHTTPRoute top level). */
  gatewayListenerTags?: boolean;
  /** `proxyTypes` is meaningful only on the top-level targetRef. */
  topLevel?: boolean;
  /** The policy affects inbounds (has `from` or `rules`): a Dataplane ref may carry `sectionName`. */
  inboundPolicy?: boolean;
  /** What the Kuma version in force accepts (kinds that do not exist there, 2.8+ fields). */
  traits: VersionTraits;
}

const NAME_REQUIRED: ReadonlySet<string> = new Set(["MeshServiceSubset", "MeshGateway"]);
const NAME_OR_LABELS: ReadonlySet<string> = new Set(["MeshService", "MeshHTTPRoute", "MeshExternalService", "MeshMultiZoneService"]);
const TAGS_REQUIRED: ReadonlySet<string> = new Set(["MeshSubset", "MeshServiceSubset"]);
/** Kinds that take `labels` / `namespace` (2.8+), and of those the ones that take `sectionName`. */
const LABELLED: ReadonlySet<string> = new Set(["Dataplane", "MeshService", "MeshExternalService", "MeshMultiZoneService", "MeshHTTPRoute"]);
const SECTIONED: ReadonlySet<string> = new Set(["Dataplane", "MeshService", "MeshMultiZoneService"]);

export function validateTargetRef(v: unknown, path: string, rules: TargetRefRules, issues: Issues): TargetRef | undefined {
  const ref = issues.obj(v, path);
  if (!ref) return undefined;
  const top = rules.traits.topLevelKinds;
  const kinds = rules.kinds.filter((k) => rules.traits.kindRank[k] !== undefined && (!rules.topLevel || !top || top.has(k)));
  if (rules.traits.labelsOnlyRefs) return validateLabelsRef(ref, path, { kinds, inboundPolicy: rules.inboundPolicy }, issues);
  const kind = issues.oneOf(ref.kind, at(path, "kind"), kinds);
  if (!kind) return undefined;
  const labelled = rules.traits.refLabelsNamespaceSection && LABELLED.has(kind);
  const hasLabels = isObj(ref.labels) && Object.keys(ref.labels).length > 0;
  if (NAME_OR_LABELS.has(kind) && labelled) {
    if (ref.name === undefined && !hasLabels) issues.add(path, `name or labels must be set when kind is ${kind}`);
    else if (ref.name !== undefined) checkRefName(ref.name, at(path, "name"), issues);
  } else if (NAME_REQUIRED.has(kind) && (ref.name === undefined || ref.name === "")) {
    issues.add(at(path, "name"), `must be set when kind is ${kind}`);
  } else if (NAME_REQUIRED.has(kind) || NAME_OR_LABELS.has(kind)) {
    issues.str(ref.name, at(path, "name"));
  } else if (ref.name !== undefined && kind !== "Dataplane") issues.add(at(path, "name"), `must not be set with kind ${kind}`);
  if (kind === "Dataplane") issues.str(ref.name, at(path, "name"), false);
  if (ref.mesh !== undefined) issues.add(at(path, "mesh"), "must not be set");
  validateTags(ref.tags, kind, path, rules, issues);
  validateLabelledFields(ref, kind, path, rules, labelled, hasLabels, issues);
  if (ref.proxyTypes !== undefined) {
    if (!rules.topLevel || (kind !== "Mesh" && kind !== "MeshSubset")) {
      issues.add(at(path, "proxyTypes"), `must not be set with kind ${kind}`);
    } else {
      const list = issues.arr(ref.proxyTypes, at(path, "proxyTypes"));
      if (list && list.length === 0 && rules.traits.strictValidation) issues.add(at(path, "proxyTypes"), "must be undefined or have at least one element");
      list?.forEach((p, i) => issues.oneOf(p, at(at(path, "proxyTypes"), i), ["Sidecar", "Gateway"] as const));
    }
  }
  return ref as unknown as TargetRef;
}

/** `labels`, `namespace`, `sectionName` (2.8+, api/common/v1alpha1 ValidateTargetRef at v2.14.3). */
function validateLabelledFields(ref: Obj, kind: TargetRefKind, path: string, rules: TargetRefRules, labelled: boolean, hasLabels: boolean, issues: Issues): void {
  for (const field of ["labels", "namespace", "sectionName"] as const) {
    if (ref[field] === undefined) continue;
    const allowed = labelled && (field !== "sectionName" || SECTIONED.has(kind));
    if (!allowed) {
      issues.add(at(path, field), `must not be set with kind ${kind}`);
      continue;
    }
    if (field === "labels") issues.stringMap(ref.labels, at(path, "labels"), false);
    else issues.str(ref[field], at(path, field));
  }
  if (!labelled) return;
  if (hasLabels && (ref.name !== undefined || ref.namespace !== undefined)) {
    issues.add(at(path, "labels"), kind === "MeshExternalService" ? "either labels or name must be specified" : "either labels or name and namespace must be specified");
  }
  if (kind === "Dataplane" && ref.sectionName !== undefined && rules.topLevel && !rules.inboundPolicy) {
    issues.add(at(path, "sectionName"), "can only be used with inbound policies");
  }
}

function checkRefName(v: unknown, path: string, issues: Issues): void {
  const name = issues.str(v, path);
  if (name && !/^[0-9a-z.\-_]*$/.test(name)) issues.add(path, "invalid characters: must consist of lower case alphanumeric characters, '-', '.' and '_'.");
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
 * MFI/MRL "gateway scope" (IncludesGateways): a top-level ref includes gateways when it is MeshGateway or
 * MeshHTTPRoute, or Mesh/MeshSubset
 * without proxyTypes or with Gateway among them.
 */
export function scopeIncludesGateways(ref: TargetRef): boolean {
  if (ref.kind === "MeshGateway" || ref.kind === "MeshHTTPRoute") return true;
  if (ref.kind !== "Mesh" && ref.kind !== "MeshSubset") return false;
  const types = ref.proxyTypes;
  return !types || types.length === 0 || types.includes("Gateway");
}
