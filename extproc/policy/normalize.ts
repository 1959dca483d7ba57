// Turns one policy document (Kuma universal or Kubernetes CRD form, as a JS object) into a normalized Policy,
// collecting every violation of the envelope and the spec.
import { at, dropNulls, Issues, isObj } from "./issues.js";
import { validateSpec } from "./validate.js";
import { POLICY_TYPES, type Origin, type Policy, type PolicySpec, type PolicyType, type Violation } from "./types.js";

export const CRD_API_VERSION = "kuma.io/v1alpha1";
const NAME_PATTERN = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,251}[A-Za-z0-9])?$/;

/** Validates a universal or CRD policy object; returns the policy only when there is no violation. */
export function validatePolicyObject(doc: unknown): { policy?: Policy; violations: Violation[] } {
  const issues = new Issues();
  if (!isObj(doc)) {
    issues.add("document", "must be an object (a policy in universal or Kubernetes form)");
    return { violations: issues.list };
  }
  const crd = doc.type === undefined && (doc.apiVersion !== undefined || doc.kind !== undefined);
  const env = crd ? crdEnvelope(doc, issues) : universalEnvelope(doc, issues);
  const specViolations = env.type ? validateSpec(env.type, dropNulls(doc.spec)) : [];
  const violations = [...issues.list, ...specViolations];
  if (violations.length > 0 || !env.type) return { violations };
  const labels = env.labels ?? {};
  const origin = labels["kuma.io/origin"];
  const policy: Policy = {
    type: env.type,
    mesh: env.mesh,
    name: env.name,
    labels,
    spec: dropNulls(doc.spec) as PolicySpec,
    displayName: labels["kuma.io/display-name"] ?? env.displayName,
  };
  if (env.namespace) policy.namespace = env.namespace;
  if (origin === "global" || origin === "zone") policy.origin = origin as Origin;
  return { policy, violations: [] };
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
  if (name && !NAME_PATTERN.test(name)) issues.add(field, "must consist of letters, digits, '-', '_' or '.', start and end with a letter or digit, at most 253 characters");
  return name;
}
