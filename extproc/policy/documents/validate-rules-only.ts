// The spec checks of MeshTrafficPermission, MeshFaultInjection and MeshRateLimit once Kuma removed their `from`
// (3.0, Kuma's master branch: each policy's api/v1alpha1/validator.go, with Kuma's messages). Kuma drops a `from`
// unread; meshext rejects it with a field path, because a dropped `from` deny would silently widen access.
import type { Issues, Obj } from "./issues.js";
import { validateMfiConf, validateMrlConf } from "./validate-confs.js";
import { PROXY_KINDS, validateItems, type SpecInput } from "./validate-items.js";
import { validateMfiRules, validateMrlRules, validateMtpRules } from "./validate-rules.js";
import { scopeIncludesGateways } from "./validate-target-ref.js";
import type { PolicyType, TargetRef, TargetRefKind } from "../model/types.js";

/** What replaces a removed `from`, per kind (after Kuma's UPGRADE.md "`from` removed from …" sections). */
const FROM_ADVICE: Readonly<Record<Exclude<PolicyType, "MeshHTTPRoute">, string>> = {
  MeshTrafficPermission: "use 'rules' with MeshIdentity (spiffeID) matches instead",
  MeshFaultInjection: "use 'rules' with SPIFFE-based 'matches' instead",
  MeshRateLimit: "use 'rules' instead",
};

const count = (v: unknown): number => (Array.isArray(v) ? v.length : 0);

function refuseFrom(type: keyof typeof FROM_ADVICE, s: Obj, issues: Issues): void {
  if (s.from !== undefined) issues.add("spec.from", `removed in Kuma 3.0: ${FROM_ADVICE[type]}`);
}

/** `to` only when the top-level scope includes gateways (IncludesGateways: Mesh), each item of kind Mesh. */
function validateGatewayTo(s: Obj, top: TargetRef | undefined, conf: typeof validateMfiConf, input: SpecInput): void {
  if (s.to === undefined) return;
  if (top && !scopeIncludesGateways(top) && count(s.to) > 0) {
    input.issues.add("spec.to", "must not be defined");
    return;
  }
  validateItems(s.to, "spec.to", ["Mesh"], conf, input.issues, false, input.ctx.traits);
}

export function validateMtpRulesOnly(input: SpecInput, topKinds: readonly TargetRefKind[]): void {
  const { s, top, hasRules, ctx, issues } = input;
  top(topKinds);
  refuseFrom("MeshTrafficPermission", s, issues);
  if (s.to !== undefined) issues.add("spec.to", "must not be defined (MeshTrafficPermission only supports rules)");
  if (!hasRules) issues.add("spec", "policy must define rules");
  else validateMtpRules(s.rules as unknown[], ctx.traits, issues);
}

export function validateMfiRulesOnly(input: SpecInput): void {
  const { s, top, hasRules, ctx, issues } = input;
  const ref = top(PROXY_KINDS, true);
  refuseFrom("MeshFaultInjection", s, issues);
  if (hasRules) validateMfiRules(s.rules as unknown[], ctx.traits, issues);
  validateGatewayTo(s, ref, validateMfiConf, input);
}

export function validateMrlRulesOnly(input: SpecInput): void {
  const { s, top, hasRules, ctx, issues } = input;
  if (count(s.rules) > 0 && count(s.to) > 0) issues.add("spec", "field 'to' must be empty when 'rules' is defined");
  if (count(s.rules) === 0 && count(s.to) === 0) issues.add("spec", "at least one of 'to' or 'rules' has to be defined");
  const ref = top([...PROXY_KINDS, "MeshHTTPRoute"], true);
  refuseFrom("MeshRateLimit", s, issues);
  if (hasRules) validateMrlRules(s, ref, ctx.traits, issues);
  validateGatewayTo(s, ref, validateMrlConf, input);
}
