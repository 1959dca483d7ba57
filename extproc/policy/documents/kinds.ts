// The documents stage's registry of policy kinds: one entry per kind, holding what is particular to the kind's
// `spec` — its validator (after Kuma's pkg/plugins/policies/<kind>/api/v1alpha1/validator.go) and its
// deprecation advice (deprecated.go). validate.ts runs what every kind shares and then the kind's entry.
import { at, type Obj } from "./issues.js";
import { validateMfiConf, validateMrlConf, validateMtpConf } from "./validate-confs.js";
import { CLIENT_KINDS, MTP_TOP, PROXY_KINDS, ROUTE_TO, validateFromToPolicy, validateItems, type SpecInput } from "./validate-items.js";
import { validateRouteRules } from "./validate-route.js";
import { validateMfiRules, validateMrlRules, validateMtpRules } from "./validate-rules.js";
import { validateTargetRef } from "./validate-target-ref.js";
import { validateMfiRulesOnly, validateMrlRulesOnly, validateMtpRulesOnly } from "./validate-rules-only.js";
import type { VersionTraits } from "../model/kuma-version.js";
import type { Issues } from "./issues.js";
import type { PolicyType } from "../model/types.js";

export interface SpecKind {
  /** Adds every violation of the kind's spec to `input.issues`. */
  validate(input: SpecInput): void;
  /** The advice appended to "'from' field is deprecated" when the version deprecates this kind's `from`. */
  fromAdvice: string;
  /** Warnings of the kind's own beyond the shared ones (added after the `from` warning). */
  warnings?(s: Obj, traits: VersionTraits, issues: Issues): void;
}

/** Every kind of model/types.ts POLICY_TYPES, and only those (the mapped type makes a missing one a compile error). */
export const SPEC_KINDS: { readonly [K in PolicyType]: SpecKind } = {
  MeshTrafficPermission: {
    validate: validateMtp,
    fromAdvice: " and will be removed in 3.0, use 'rules' with MeshIdentity (spiffeId) instead",
    warnings: mtpWarnings,
  },
  MeshFaultInjection: {
    validate(input) {
      const { s, top, hasRules, rulesAllowed, ctx, issues } = input;
      if (ctx.traits.fromRemoved.has("MeshFaultInjection")) return validateMfiRulesOnly(input);
      if (hasRules && Array.isArray(s.from) && s.from.length > 0) issues.add("spec", "field 'from' must be empty when 'rules' is defined");
      validateFromToPolicy(s, top(PROXY_KINDS, true), CLIENT_KINDS, validateMfiConf, rulesAllowed, ctx, issues);
      if (hasRules) validateMfiRules(s.rules as unknown[], ctx.traits, issues);
    },
    fromAdvice: ", use 'rules' with SPIFFE-based 'matches' instead",
  },
  MeshRateLimit: {
    validate(input) {
      const { s, top, hasRules, rulesAllowed, ctx, issues } = input;
      if (ctx.traits.fromRemoved.has("MeshRateLimit")) return validateMrlRulesOnly(input);
      const ref = top([...PROXY_KINDS, "MeshHTTPRoute"], true);
      validateFromToPolicy(s, ref, ["Mesh"], validateMrlConf, rulesAllowed, ctx, issues);
      if (hasRules) validateMrlRules(s, ref, ctx.traits, issues);
    },
    fromAdvice: ", use 'rules' instead",
  },
  MeshHTTPRoute: {
    validate: validateRoute,
    fromAdvice: ", use 'rules' instead",
  },
};

function validateMtp(input: SpecInput): void {
  const { s, top, hasRules, ctx, issues } = input;
  if (ctx.traits.fromRemoved.has("MeshTrafficPermission")) return validateMtpRulesOnly(input, MTP_TOP);
  top(MTP_TOP);
  if (s.to !== undefined) issues.add("spec.to", "must not be defined (MeshTrafficPermission only supports from)");
  if (!ctx.traits.rulesKinds.has("MeshTrafficPermission")) {
    validateItems(s.from, "spec.from", CLIENT_KINDS, validateMtpConf, issues, true, ctx.traits);
    return;
  }
  const fromCount = Array.isArray(s.from) ? s.from.length : 0;
  if (fromCount > 0 && hasRules) issues.add("spec", "field 'from' must be empty when 'rules' is defined");
  if (fromCount === 0 && !hasRules) issues.add("spec", "at least one of 'from' or 'rules' has to be defined");
  validateItems(s.from, "spec.from", CLIENT_KINDS, validateMtpConf, issues, false, ctx.traits);
  if (hasRules) validateMtpRules(s.rules as unknown[], ctx.traits, issues);
}

function mtpWarnings(s: Obj, traits: VersionTraits, issues: Issues): void {
  if (!traits.deprecatedFrom.has("MeshTrafficPermission")) return;
  const from = Array.isArray(s.from) ? s.from : [];
  from.forEach((f, i) => {
    if ((f as { targetRef?: { kind?: unknown } })?.targetRef?.kind === "MeshService") {
      issues.warn(at(at("spec.from", i), "targetRef.kind"), "MeshService value for 'from[].targetRef.kind' is deprecated, use MeshSubset with 'kuma.io/service' instead");
    }
  });
}

function validateRoute({ s, top, ctx, issues }: SpecInput): void {
  const ref = top(PROXY_KINDS, true);
  if (s.from !== undefined) issues.add("spec.from", "must not be defined (MeshHTTPRoute only supports to)");
  const gateway = ref?.kind === "MeshGateway";
  // Kuma validates each `to` item and none when the list is empty (validateTos): `to: []` is a route to nothing.
  const to = issues.arr(s.to, "spec.to", true);
  to?.forEach((raw, i) => {
    const p = at("spec.to", i);
    const item = issues.obj(raw, p);
    if (!item) return;
    const kinds = gateway ? ["Mesh" as const] : ROUTE_TO.filter((k) => k === "MeshService" || ctx.traits.realServiceKinds.has(k));
    validateTargetRef(item.targetRef, at(p, "targetRef"), { kinds, traits: ctx.traits }, issues);
    // Kuma 3.0 has no MeshGateway refs: hostnames are never allowed (validateHostnames, "must not be defined").
    if (item.hostnames !== undefined && !gateway) issues.add(at(p, "hostnames"), ctx.traits.labelsOnlyRefs ? "must not be defined" : "can only be specified with a MeshGateway top-level targetRef");
    issues.arr(item.hostnames, at(p, "hostnames"), false)?.forEach((h, j) => issues.str(h, at(at(p, "hostnames"), j)));
    validateRouteRules(item.rules, at(p, "rules"), { gatewayTop: gateway, traits: ctx.traits }, issues);
  });
}
