// Validates a policy `spec` and returns every violation at once, plus Kuma's deprecation warnings: what every
// kind shares (the version's `rules`, the top-level targetRef, deprecated targetRef kinds) here, each kind's own
// checks in its entry of kinds.ts — Kuma 2.6 validators (each policy's api/v1alpha1/validator.go at 2.6.0),
// and the 2.7–2.14 model (rules, Dataplane kind) as the version allows.
import { Issues, type Obj } from "./issues.js";
import type { VersionTraits } from "../model/kuma-version.js";
import { SPEC_KINDS, type SpecKind } from "./kinds.js";
import type { SpecContext } from "./validate-items.js";
import { validateTargetRef } from "./validate-target-ref.js";
import type { PolicyType, TargetRef, TargetRefKind, Violation } from "../model/types.js";

export type { SpecContext } from "./validate-items.js";

export interface SpecResult {
  violations: Violation[];
  warnings: Violation[];
  /** The top-level targetRef was absent (2.9+: Mesh). */
  implicitTargetRef: boolean;
}

/** Validates `spec` of a policy of `type`; field paths start at `spec`. */
export function validateSpec(type: PolicyType, spec: unknown, ctx: SpecContext): SpecResult {
  const issues = new Issues();
  const s = issues.obj(spec, "spec");
  if (!s) return { violations: issues.list, warnings: [], implicitTargetRef: false };
  const implicit = s.targetRef === undefined && ctx.traits.optionalTopLevelTargetRef;
  const rulesAllowed = ctx.traits.rulesKinds.has(type);
  if (s.rules !== undefined && !rulesAllowed) issues.add("spec.rules", `must not be defined (Kuma ${ctx.traits.version} has no rules for ${type})`);
  const hasRules = rulesAllowed && Array.isArray(s.rules) && s.rules.length > 0;
  const inboundPolicy = hasRules || (Array.isArray(s.from) && s.from.length > 0);
  const top = (kinds: readonly TargetRefKind[], gatewayListenerTags = false): TargetRef | undefined =>
    implicit ? { kind: "Mesh" } : validateTargetRef(s.targetRef, "spec.targetRef", { kinds: systemOnly(kinds, ctx), gatewayListenerTags, topLevel: true, inboundPolicy, traits: ctx.traits }, issues);
  // The kind's own checks (documents/kinds.ts); `type` is one of POLICY_TYPES by the time it gets here.
  const kind: SpecKind | undefined = SPEC_KINDS[type];
  kind?.validate({ s, ctx, issues, top, rulesAllowed, hasRules });
  deprecations(type, s, implicit ? undefined : (s.targetRef as Obj | undefined), ctx.traits, issues);
  return { violations: issues.list, warnings: issues.warnings, implicitTargetRef: implicit };
}

/** From 2.8 MeshGateway (and MeshHTTPRoute) top-level refs are only for `system`-role policies. */
function systemOnly(kinds: readonly TargetRefKind[], ctx: SpecContext): readonly TargetRefKind[] {
  if (ctx.role === "system" || ctx.traits.roleOrder === "none") return kinds;
  return kinds.filter((k) => k !== "MeshGateway" && k !== "MeshHTTPRoute");
}

/** Kuma's `Deprecations()` of each policy (deprecated.go) and TopLevelTargetRefDeprecations, as warnings. */
function deprecations(type: PolicyType, s: Obj, ref: Obj | undefined, traits: VersionTraits, issues: Issues): void {
  const from = Array.isArray(s.from) ? s.from : [];
  const own: SpecKind | undefined = SPEC_KINDS[type];
  if (own && from.length > 0 && traits.deprecatedFrom.has(type)) issues.warn("spec.from", `'from' field is deprecated${own.fromAdvice}`);
  own?.warnings?.(s, traits, issues);
  const kind = ref?.kind as TargetRefKind | undefined;
  if (!kind || !traits.deprecatedTopLevelKinds.has(kind)) return;
  const message =
    kind === "MeshHTTPRoute"
      ? "MeshHTTPRoute value for 'targetRef.kind' is deprecated, use MeshHTTPRoute in spec.to[].targetRef"
      : traits.kindRank.Dataplane !== undefined
        ? `${kind} value for 'targetRef.kind' is deprecated, use Dataplane with labels instead`
        : `${kind} value for 'targetRef.kind' is deprecated, use MeshSubset instead`;
  issues.warn("spec.targetRef.kind", message);
}
