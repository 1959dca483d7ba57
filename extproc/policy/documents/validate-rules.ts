// Validates `spec.rules[]` of MeshTrafficPermission, MeshFaultInjection and MeshRateLimit with Kuma 2.14's
// field paths and messages (each policy's api/v1alpha1/validator.go and ValidateMatch in
// pkg/core/resources/apis/mesh/validators.go at v2.14.3).
import { at, Issues, isObj, type Obj } from "./issues.js";
import type { VersionTraits } from "../model/kuma-version.js";
import { validateMfiConf, validateMrlConf } from "./validate-confs.js";
import { scopeIncludesGateways } from "./validate-target-ref.js";
import type { TargetRef } from "../model/types.js";

const MTP_LISTS = ["allow", "allowWithShadowDeny", "deny"] as const;

export function validateMtpRules(rules: unknown[], traits: VersionTraits, issues: Issues): void {
  rules.forEach((raw, i) => {
    const p = at("spec.rules", i);
    const rule = issues.obj(raw, p);
    if (!rule) return;
    const def = issues.obj(rule.default, at(p, "default"));
    if (rule.matches !== undefined) issues.warn(at(p, "matches"), "ignored: MeshTrafficPermission rules match with their allow and deny lists");
    if (!def) return;
    const lists = MTP_LISTS.map((f) => issues.arr(def[f], at(at(p, "default"), f), false) ?? []);
    if (lists.every((l) => l.length === 0)) issues.add(p, "at least one of 'allow', 'allowWithShadowDeny', 'deny' has to be defined");
    // Kuma roots these paths at the rule, not at `default` (validateMatches("allow", …) in validator.go).
    MTP_LISTS.forEach((f, k) => lists[k]!.forEach((m, j) => validateMatch(m, at(at(p, f), j), traits, issues, false)));
  });
}

export function validateMfiRules(rules: unknown[], traits: VersionTraits, issues: Issues): void {
  rules.forEach((raw, i) => {
    const p = at("spec.rules", i);
    const rule = issues.obj(raw, p);
    if (!rule) return;
    validateMatches(rule.matches, p, traits.matchesKinds.has("MeshFaultInjection"), traits, issues, false);
    const def = issues.obj(rule.default, at(p, "default"));
    if (def) validateMfiConf(def, at(p, "default"), issues);
  });
}

export function validateMrlRules(s: Obj, top: TargetRef | undefined, traits: VersionTraits, issues: Issues): void {
  const rules = s.rules as unknown[];
  // Kuma 3.0 has no `from` and words the `to` check differently (validate-rules-only.ts).
  if (!traits.fromRemoved.has("MeshRateLimit") && ((Array.isArray(s.to) && s.to.length > 0) || (Array.isArray(s.from) && s.from.length > 0))) {
    issues.add("spec", "fields 'to' and 'from' must be empty when 'rules' is defined");
  }
  if (top && scopeIncludesGateways(top)) issues.add("spec.rules", "must not be defined");
  rules.forEach((raw, i) => {
    const p = at("spec.rules", i);
    const rule = issues.obj(raw, p);
    if (!rule) return;
    const hasSpiffe = validateMatches(rule.matches, p, traits.matchesKinds.has("MeshRateLimit"), traits, issues, true);
    const def = issues.obj(rule.default, at(p, "default"));
    if (!def) return;
    validateMrlConf(def, at(p, "default"), issues);
    if (hasSpiffe && isObj(def.local) && def.local.tcp !== undefined) {
      issues.add(at(at(p, "default"), "local.tcp"), "can't be specified when matches contain spiffeID because this field cannot be conditioned on source identity");
    }
  });
}

/** `matches[]` of one rule; returns whether any holds a spiffeID. */
function validateMatches(v: unknown, rulePath: string, allowed: boolean, traits: VersionTraits, issues: Issues, requireField: boolean): boolean {
  if (v === undefined) return false;
  if (!allowed) {
    issues.add(at(rulePath, "matches"), `must not be defined (Kuma ${traits.version} has no matches here)`);
    return false;
  }
  let spiffe = false;
  issues.arr(v, at(rulePath, "matches"), false)?.forEach((m, j) => {
    if (validateMatch(m, at(at(rulePath, "matches"), j), traits, issues, requireField)) spiffe = true;
  });
  return spiffe;
}

/** One Match: spiffeID {type Exact|Prefix, value: a SPIFFE ID} and/or sni {type Exact, value: DNS-1123}. */
function validateMatch(v: unknown, path: string, traits: VersionTraits, issues: Issues, requireField: boolean): boolean {
  const m = issues.obj(v, path);
  if (!m) return false;
  if (m.spiffeID === undefined && m.sni === undefined) {
    if (requireField) issues.add(path, "must specify at least one of 'spiffeID' or 'sni'");
    else issues.warn(path, "matches no client: neither 'spiffeID' nor 'sni' is set");
    return false;
  }
  const sp = m.spiffeID === undefined ? undefined : issues.obj(m.spiffeID, at(path, "spiffeID"));
  if (sp) {
    if (sp.type === undefined || sp.type === "") issues.add(at(at(path, "spiffeID"), "type"), "must be set");
    else if (sp.type !== "Exact" && sp.type !== "Prefix") issues.add(at(at(path, "spiffeID"), "type"), `unrecognized type "${String(sp.type)}", supported values are: Exact, Prefix`);
    const problem = typeof sp.value === "string" ? spiffeIdProblem(sp.value) : "value must be a string";
    if (problem) issues.add(at(path, "spiffeID"), `must be a valid Spiffe ID: ${problem}`);
  }
  if (m.sni !== undefined) {
    if (!traits.sniMatches) issues.add(at(path, "sni"), `must not be defined (sni matches are new in Kuma 2.14)`);
    else {
      const sni = issues.obj(m.sni, at(path, "sni"));
      if (sni) {
        if (sni.type === undefined || sni.type === "") issues.add(at(at(path, "sni"), "type"), "must be set");
        else if (sni.type !== "Exact") issues.add(at(at(path, "sni"), "type"), `unrecognized type "${String(sni.type)}", supported values are: Exact`);
        if (typeof sni.value !== "string" || sni.value === "") issues.add(at(at(path, "sni"), "value"), "must be set");
        else if (!DNS1123_SUBDOMAIN.test(sni.value) || sni.value.length > 253) issues.add(at(at(path, "sni"), "value"), RFC1123_MESSAGE);
      }
    }
  }
  return sp !== undefined;
}

export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const RFC1123_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/** Why `id` is not a SPIFFE ID (the rules of go-spiffe's spiffeid.FromString), or undefined when it is one. */
export function spiffeIdProblem(id: string): string | undefined {
  if (id === "") return "cannot be empty";
  if (!id.startsWith("spiffe://")) return "scheme is missing or invalid";
  const rest = id.slice("spiffe://".length);
  const slash = rest.indexOf("/");
  const td = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? "" : rest.slice(slash);
  if (td === "") return "trust domain is missing";
  if (!/^[a-z0-9._-]+$/.test(td)) return "trust domain characters are limited to lowercase letters, numbers, dots, dashes, and underscores";
  if (path === "") return undefined;
  const segments = path.slice(1).split("/");
  for (const [i, seg] of segments.entries()) {
    if (seg === "") return i === segments.length - 1 ? "path cannot have a trailing slash" : "path cannot contain empty segments";
    if (seg === "." || seg === "..") return "path cannot contain dot segments";
    if (!/^[A-Za-z0-9._-]+$/.test(seg)) return "path segment characters are limited to letters, numbers, dots, dashes, and underscores";
  }
  return undefined;
}
