// The pieces of a spec the kinds' validators share: the targetRef kinds each list may name, and `from`/`to`
// item lists (each item a targetRef and a `default` conf checked by the kind's conf validator).
import { at, Issues, type Obj } from "./issues.js";
import type { VersionTraits } from "../model/kuma-version.js";
import { scopeIncludesGateways, validateTargetRef } from "./validate-target-ref.js";
import type { PolicyRole, TargetRef, TargetRefKind } from "../model/types.js";

export const CLIENT_KINDS: readonly TargetRefKind[] = ["Mesh", "MeshSubset", "MeshService", "MeshServiceSubset"];
export const MTP_TOP: readonly TargetRefKind[] = [...CLIENT_KINDS, "Dataplane"];
export const PROXY_KINDS: readonly TargetRefKind[] = ["Mesh", "MeshSubset", "MeshGateway", "MeshService", "MeshServiceSubset", "Dataplane"];
export const ROUTE_TO: readonly TargetRefKind[] = ["MeshService", "MeshExternalService", "MeshMultiZoneService"];

export type ConfValidator = (conf: Obj, path: string, issues: Issues) => void;

export interface SpecContext {
  traits: VersionTraits;
  role: PolicyRole;
}

/** What a kind's spec validator is given: the spec object and what validate.ts worked out for every kind. */
export interface SpecInput {
  s: Obj;
  ctx: SpecContext;
  issues: Issues;
  /** Validates the top-level targetRef against the kinds this policy kind allows (Mesh when it is implicit). */
  top(kinds: readonly TargetRefKind[], gatewayListenerTags?: boolean): TargetRef | undefined;
  /** The Kuma version has `rules` for this kind. */
  rulesAllowed: boolean;
  /** The spec has a non-empty `rules` list the version allows. */
  hasRules: boolean;
}

/** MFI and MRL: `from` for sidecars, `to` (kind Mesh) only when the top-level scope includes gateways. */
export function validateFromToPolicy(s: Obj, top: TargetRef | undefined, fromKinds: readonly TargetRefKind[], conf: ConfValidator, rulesAllowed: boolean, ctx: SpecContext, issues: Issues): void {
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

export function validateItems(v: unknown, path: string, kinds: readonly TargetRefKind[], conf: ConfValidator, issues: Issues, required: boolean, traits: VersionTraits): void {
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
