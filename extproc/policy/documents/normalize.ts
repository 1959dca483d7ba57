// Turns one policy document (Kuma universal or Kubernetes CRD form, as a JS object) into a normalized Policy,
// collecting every violation of the envelope and the spec.
import { LABEL } from "../model/dataplane.js";
import { at, dropNulls, Issues, isObj, type Obj } from "./issues.js";
import { DEFAULT_KUMA_VERSION, versionTraits, type KumaVersion } from "../model/kuma-version.js";
import { validateSpec } from "./validate.js";
import { isResourceName } from "./resource-name.js";
import { DNS1123_SUBDOMAIN, RFC1123_MESSAGE } from "./validate-rules.js";
import { POLICY_TYPES, type Origin, type Policy, type PolicyRole, type PolicySpec, type PolicyType, type Violation } from "../model/types.js";

/** Kuma's system namespace on Kubernetes: policies there have role `system`. */
export const SYSTEM_NAMESPACE = "kuma-system";
const ROLES: readonly PolicyRole[] = ["system", "producer", "consumer", "workload-owner"];

export const CRD_API_VERSION = "kuma.io/v1alpha1";

export interface PolicyValidation {
  policy?: Policy;
  violations: Violation[];
  /** Kuma's deprecation warnings (the policy loads). */
  warnings: Violation[];
}

/**
 * Validates a universal or CRD policy object as the Kuma `version` would (default 2.14); returns the policy
 * only when there is no violation.
 */
export function validatePolicyObject(doc: unknown, version: KumaVersion = DEFAULT_KUMA_VERSION): PolicyValidation {
  const issues = new Issues();
  if (!isObj(doc)) {
    issues.add("document", "must be an object (a policy in universal or Kubernetes form)");
    return { violations: issues.list, warnings: [] };
  }
  const traits = versionTraits(version);
  const crd = doc.type === undefined && (doc.apiVersion !== undefined || doc.kind !== undefined);
  const env = crd ? crdEnvelope(doc, issues) : universalEnvelope(doc, issues);
  if (traits.strictValidation) checkRfc1123(env.displayName, crd ? "metadata.name" : "name", issues);
  const spec = dropNulls(doc.spec);
  const labels = env.labels ?? {};
  const k8sNamespace = labels[LABEL.namespace] ?? env.namespace;
  const role = policyRole(labels, k8sNamespace, spec, issues, traits.labelsOnlyRefs);
  const checked = env.type ? validateSpec(env.type, spec, { traits, role }) : undefined;
  const violations = [...issues.list, ...(checked?.violations ?? [])];
  const warnings = checked?.warnings ?? [];
  if (violations.length > 0 || !env.type || !checked) return { violations, warnings };
  const origin = labels[LABEL.origin];
  const normalized = { ...(spec as Obj) } as unknown as PolicySpec;
  if (checked.implicitTargetRef) normalized.targetRef = { kind: "Mesh" };
  const policy: Policy = {
    type: env.type,
    mesh: env.mesh,
    name: env.name,
    labels,
    spec: normalized,
    displayName: labels[LABEL.displayName] ?? env.displayName,
    role,
    shadow: labels[LABEL.effect] === "shadow",
    warnings,
  };
  if (checked.implicitTargetRef) policy.implicitTargetRef = true;
  if (env.namespace) policy.namespace = env.namespace;
  if (k8sNamespace) policy.k8sNamespace = k8sNamespace;
  if (labels[LABEL.zone]) policy.zone = labels[LABEL.zone];
  if (origin === "global" || origin === "zone") policy.origin = origin as Origin;
  return { policy, violations: [], warnings };
}

/**
 * `kuma.io/policy-role` (pkg/core/resources/labels/compute.go): the label when set; else, for a policy in a
 * namespace other than the system one, workload-owner when it has `from` or neither `from` nor `to`,
 * producer when every `to` item names a MeshService/MeshHTTPRoute of its own namespace, consumer when none
 * does; else system. With labels-only refs (3.0: ComputePolicyRole on Kuma's master branch) an item "names" one
 * resource when its labels are `kuma.io/display-name` (+ `k8s.kuma.io/namespace` of the policy's namespace) only.
 */
function policyRole(labels: Record<string, string>, namespace: string | undefined, spec: unknown, issues: Issues, byLabels = false): PolicyRole {
  const label = labels[LABEL.role];
  if (label !== undefined) {
    if ((ROLES as readonly string[]).includes(label)) return label as PolicyRole;
    issues.add(at("labels", LABEL.role), `must be one of ${ROLES.join(", ")}`);
    return "system";
  }
  if (!namespace || namespace === SYSTEM_NAMESPACE || !isObj(spec)) return "system";
  const from = Array.isArray(spec.from) && spec.from.length > 0;
  const to = Array.isArray(spec.to) ? spec.to : [];
  if (from || to.length === 0) return "workload-owner";
  const producing = to.map((item) => {
    const ref = isObj(item) && isObj(item.targetRef) ? item.targetRef : {};
    if (ref.kind !== "MeshService" && ref.kind !== "MeshHTTPRoute") return false;
    if (byLabels) return namesOneByDisplayName(ref.labels, namespace);
    return typeof ref.name === "string" && (ref.namespace === undefined || ref.namespace === namespace);
  });
  if (producing.every(Boolean)) return "producer";
  if (!producing.some(Boolean)) return "consumer";
  issues.add("spec.to", "it's not allowed to mix producer and consumer items in the same policy");
  return "consumer";
}

function namesOneByDisplayName(refLabels: unknown, namespace: string): boolean {
  if (!isObj(refLabels) || typeof refLabels[LABEL.displayName] !== "string" || refLabels[LABEL.displayName] === "") return false;
  if (Object.keys(refLabels).some((k) => k !== LABEL.displayName && k !== LABEL.namespace)) return false;
  const ns = refLabels[LABEL.namespace];
  return ns === undefined || ns === "" || ns === namespace;
}

function checkRfc1123(name: string, field: string, issues: Issues): void {
  if (issues.list.some((v) => v.field === field)) return;
  if (name && (!DNS1123_SUBDOMAIN.test(name) || name.length > 253)) issues.add(field, `invalid characters. A ${RFC1123_MESSAGE.slice(2)}`);
}

interface Envelope {
  type?: PolicyType;
  mesh: string;
  name: string;
  displayName: string;
  namespace?: string;
  labels?: Record<string, string>;
}

function universalEnvelope(doc: Record<string, unknown>, issues: Issues): Envelope {
  const type = issues.oneOf(doc.type, "type", POLICY_TYPES);
  const mesh = issues.str(doc.mesh, "mesh", false) ?? "default";
  if (mesh === "") issues.add("mesh", "must not be empty");
  const name = checkName(doc.name, "name", issues);
  const labels = issues.stringMap(doc.labels, "labels", false);
  return { type, mesh, name, displayName: name, labels };
}

function crdEnvelope(doc: Record<string, unknown>, issues: Issues): Envelope {
  if (doc.apiVersion !== CRD_API_VERSION) issues.add("apiVersion", `must be ${CRD_API_VERSION}`);
  const type = issues.oneOf(doc.kind, "kind", POLICY_TYPES);
  const meta = issues.obj(doc.metadata, "metadata") ?? {};
  const shortName = checkName(meta.name, "metadata.name", issues);
  const namespace = issues.str(meta.namespace, "metadata.namespace", false);
  const labels = issues.stringMap(meta.labels, at("metadata", "labels"), false);
  const mesh = labels?.["kuma.io/mesh"] ?? "default";
  const name = namespace ? `${shortName}.${namespace}` : shortName;
  return { type, mesh, name, displayName: shortName, namespace, labels };
}

function checkName(v: unknown, field: string, issues: Issues): string {
  const name = issues.str(v, field) ?? "";
  if (name && !isResourceName(name)) issues.add(field, "must consist of letters, digits, '-', '_' or '.', start and end with a letter or digit, at most 253 characters");
  return name;
}
