// Validates a policy `spec` per kind and returns every violation at once, plus Kuma's deprecation warnings:
// Kuma 2.6 validators (each policy's api/v1alpha1/validator.go at 2.6.0), and the 2.7–2.14 model (rules,
// Dataplane kind) as the version allows.
import { at, Issues, type Obj } from "./issues.js";
import type { VersionTraits } from "../model/kuma-version.js";
import { validateMfiConf, validateMrlConf, validateMtpConf } from "./validate-confs.js";
import { validateRouteRules } from "./validate-route.js";
import { validateMfiRules, validateMrlRules, validateMtpRules } from "./validate-rules.js";
import { scopeIncludesGateways, validateTargetRef } from "./validate-target-ref.js";
import type { PolicyRole, PolicyType, TargetRef, TargetRefKind, Violation } from "../model/types.js";

const CLIENT_KINDS: readonly TargetRefKind[] = ["Mesh", "MeshSubset", "MeshService", "MeshServiceSubset"];
const MTP_TOP: readonly TargetRefKind[] = [...CLIENT_KINDS, "Dataplane"];
const PROXY_KINDS: readonly TargetRefKind[] = ["Mesh", "MeshSubset", "MeshGateway", "MeshService", "MeshServiceSubset", "Dataplane"];
const ROUTE_TO: readonly TargetRefKind[] = ["MeshService", "MeshExternalService", "MeshMultiZoneService"];

type ConfValidator = (conf: Obj, path: string, issues: Issues) => void;

export interface SpecContext {
  traits: VersionTraits;
  role: PolicyRole;
}

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
  switch (type) {
    case "MeshTrafficPermission":
      validateMtp(s, top(MTP_TOP), hasRules, ctx, issues);
      break;
    case "MeshFaultInjection":
      if (hasRules && Array.isArray(s.from) && s.from.length > 0) issues.add("spec", "field 'from' must be empty when 'rules' is defined");
      validateFromToPolicy(s, top(PROXY_KINDS, true), CLIENT_KINDS, validateMfiConf, rulesAllowed, ctx, issues);
      if (hasRules) validateMfiRules(s.rules as unknown[], ctx.traits, issues);
      break;
    case "MeshRateLimit": {
      const ref = top([...PROXY_KINDS, "MeshHTTPRoute"], true);
      validateFromToPolicy(s, ref, ["Mesh"], validateMrlConf, rulesAllowed, ctx, issues);
      if (hasRules) validateMrlRules(s, ref, ctx.traits, issues);
      break;
    }
    case "MeshHTTPRoute":
      validateRoute(s, top(PROXY_KINDS, true), ctx, issues);
      break;
  }
  deprecations(type, s, implicit ? undefined : (s.targetRef as Obj | undefined), ctx.traits, issues);
  return { violations: issues.list, warnings: issues.warnings, implicitTargetRef: implicit };
}

/** From 2.8 MeshGateway (and MeshHTTPRoute) top-level refs are only for `system`-role policies. */
function systemOnly(kinds: readonly TargetRefKind[], ctx: SpecContext): readonly TargetRefKind[] {
  if (ctx.role === "system" || ctx.traits.roleOrder === "none") return kinds;
  return kinds.filter((k) => k !== "MeshGateway" && k !== "MeshHTTPRoute");
}

function validateMtp(s: Obj, top: TargetRef | undefined, hasRules: boolean, ctx: SpecContext, issues: Issues): void {
  void top;
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

/** MFI and MRL: `from` for sidecars, `to` (kind Mesh) only when the top-level scope includes gateways. */
function validateFromToPolicy(s: Obj, top: TargetRef | undefined, fromKinds: readonly TargetRefKind[], conf: ConfValidator, rulesAllowed: boolean, ctx: SpecContext, issues: Issues): void {
  if (s.from === undefined && s.to === undefined && !rulesAllowed) issues.add("spec", "at least one of 'from', 'to' has to be defined");
  const gateways = top?.kind ? scopeIncludesGateways(top) : false;
  // Kuma checks the scope only against a non-empty list (`len(to) != 0`): `from: []` / `to: []` pass anywhere.
  const listed = (v: unknown): boolean => !Array.isArray(v) || v.length > 0;
  if (s.from !== undefined) {
    if (gateways && listed(s.from)) issues.add("spec.from", "must not be defined when the scope includes a Gateway, select only proxyType Sidecar");
    validateItems(s.from, "spec.from", fromKinds, conf, issues, false, ctx.traits);
  }
  if (s.to !== undefined) {
    if (top?.kind && !gateways && listed(s.to)) issues.add("spec.to", "must not be defined when the scope does not include a Gateway");
    validateItems(s.to, "spec.to", ["Mesh"], conf, issues, false, ctx.traits);
  }
}

function validateRoute(s: Obj, top: TargetRef | undefined, ctx: SpecContext, issues: Issues): void {
  if (s.from !== undefined) issues.add("spec.from", "must not be defined (MeshHTTPRoute only supports to)");
  const gateway = top?.kind === "MeshGateway";
  // Kuma validates each `to` item and none when the list is empty (validateTos): `to: []` is a route to nothing.
  const to = issues.arr(s.to, "spec.to", true);
  to?.forEach((raw, i) => {
    const p = at("spec.to", i);
    const item = issues.obj(raw, p);
    if (!item) return;
    const kinds = gateway ? ["Mesh" as const] : ROUTE_TO.filter((k) => k === "MeshService" || ctx.traits.realServiceKinds.has(k));
    validateTargetRef(item.targetRef, at(p, "targetRef"), { kinds, traits: ctx.traits }, issues);
    if (item.hostnames !== undefined && !gateway) issues.add(at(p, "hostnames"), "can only be specified with a MeshGateway top-level targetRef");
    issues.arr(item.hostnames, at(p, "hostnames"), false)?.forEach((h, j) => issues.str(h, at(at(p, "hostnames"), j)));
    validateRouteRules(item.rules, at(p, "rules"), { gatewayTop: gateway, traits: ctx.traits }, issues);
  });
}

function validateItems(v: unknown, path: string, kinds: readonly TargetRefKind[], conf: ConfValidator, issues: Issues, required: boolean, traits: VersionTraits): void {
  const items = issues.arr(v, path, required, required ? 1 : 0);
  items?.forEach((raw, i) => {
    const p = at(path, i);
    const item = issues.obj(raw, p);
    if (!item) return;
    validateTargetRef(item.targetRef, at(p, "targetRef"), { kinds, traits }, issues);
    const def = issues.obj(item.default, at(p, "default"));
    if (def) conf(def, at(p, "default"), issues);
  });
}

/** Kuma's `Deprecations()` of each policy (deprecated.go) and TopLevelTargetRefDeprecations, as warnings. */
function deprecations(type: PolicyType, s: Obj, ref: Obj | undefined, traits: VersionTraits, issues: Issues): void {
  const from = Array.isArray(s.from) ? s.from : [];
  if (from.length > 0 && traits.deprecatedFrom.has(type)) {
    const use = type === "MeshTrafficPermission" ? " and will be removed in 3.0, use 'rules' with MeshIdentity (spiffeId) instead" : type === "MeshFaultInjection" ? ", use 'rules' with SPIFFE-based 'matches' instead" : ", use 'rules' instead";
    issues.warn("spec.from", `'from' field is deprecated${use}`);
  }
  if (type === "MeshTrafficPermission" && traits.deprecatedFrom.has(type)) {
    from.forEach((f, i) => {
      if ((f as { targetRef?: { kind?: unknown } })?.targetRef?.kind === "MeshService") {
        issues.warn(at(at("spec.from", i), "targetRef.kind"), "MeshService value for 'from[].targetRef.kind' is deprecated, use MeshSubset with 'kuma.io/service' instead");
      }
    });
  }
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
