// Validates a policy `spec` per kind and returns every violation at once (Kuma 2.6 validators, reference §1.3).
import { at, Issues, type Obj } from "./issues.js";
import { validateMfiConf, validateMrlConf, validateMtpConf } from "./validate-confs.js";
import { validateRouteRules } from "./validate-route.js";
import { scopeIncludesGateways, validateTargetRef } from "./validate-target-ref.js";
import type { PolicyType, TargetRefKind, Violation } from "./types.js";

const CLIENT_KINDS: readonly TargetRefKind[] = ["Mesh", "MeshSubset", "MeshService", "MeshServiceSubset"];
const PROXY_KINDS: readonly TargetRefKind[] = ["Mesh", "MeshSubset", "MeshGateway", "MeshService", "MeshServiceSubset"];

type ConfValidator = (conf: Obj, path: string, issues: Issues) => void;

/** Validates `spec` of a policy of `type`; field paths start at `spec`. */
export function validateSpec(type: PolicyType, spec: unknown): Violation[] {
  const issues = new Issues();
  const s = issues.obj(spec, "spec");
  if (!s) return issues.list;
  switch (type) {
    case "MeshTrafficPermission":
      validateMtp(s, issues);
      break;
    case "MeshFaultInjection":
      validateFromToPolicy(s, issues, CLIENT_KINDS, validateMfiConf);
      break;
    case "MeshRateLimit":
      validateFromToPolicy(s, issues, ["Mesh"], validateMrlConf);
      break;
    case "MeshHTTPRoute":
      validateRoute(s, issues);
      break;
  }
  return issues.list;
}

function validateMtp(s: Obj, issues: Issues): void {
  validateTargetRef(s.targetRef, "spec.targetRef", { kinds: CLIENT_KINDS, topLevel: true }, issues);
  if (s.to !== undefined) issues.add("spec.to", "must not be defined (MeshTrafficPermission only supports from)");
  validateItems(s.from, "spec.from", CLIENT_KINDS, validateMtpConf, issues, true);
}

/** MFI and MRL: `from` for sidecars, `to` (kind Mesh) only when the top-level scope includes gateways. */
function validateFromToPolicy(s: Obj, issues: Issues, fromKinds: readonly TargetRefKind[], conf: ConfValidator): void {
  const top = validateTargetRef(s.targetRef, "spec.targetRef", { kinds: PROXY_KINDS, gatewayListenerTags: true, topLevel: true }, issues);
  if (s.from === undefined && s.to === undefined) issues.add("spec", "at least one of 'from', 'to' has to be defined");
  const gateways = top?.kind ? scopeIncludesGateways(top) : false;
  if (s.from !== undefined) {
    if (gateways) issues.add("spec.from", "must not be defined when the scope includes a Gateway, select only proxyType Sidecar");
    validateItems(s.from, "spec.from", fromKinds, conf, issues, false);
  }
  if (s.to !== undefined) {
    if (top?.kind && !gateways) issues.add("spec.to", "must not be defined when the scope does not include a Gateway");
    validateItems(s.to, "spec.to", ["Mesh"], conf, issues, false);
  }
}

function validateRoute(s: Obj, issues: Issues): void {
  const top = validateTargetRef(s.targetRef, "spec.targetRef", { kinds: PROXY_KINDS, gatewayListenerTags: true, topLevel: true }, issues);
  if (s.from !== undefined) issues.add("spec.from", "must not be defined (MeshHTTPRoute only supports to)");
  const gateway = top?.kind === "MeshGateway";
  const to = issues.arr(s.to, "spec.to", true, 1);
  to?.forEach((raw, i) => {
    const p = at("spec.to", i);
    const item = issues.obj(raw, p);
    if (!item) return;
    validateTargetRef(item.targetRef, at(p, "targetRef"), { kinds: gateway ? ["Mesh"] : ["MeshService"] }, issues);
    if (item.hostnames !== undefined && !gateway) issues.add(at(p, "hostnames"), "can only be specified with a MeshGateway top-level targetRef");
    issues.arr(item.hostnames, at(p, "hostnames"), false)?.forEach((h, j) => issues.str(h, at(at(p, "hostnames"), j)));
    validateRouteRules(item.rules, at(p, "rules"), issues);
  });
}

function validateItems(v: unknown, path: string, kinds: readonly TargetRefKind[], conf: ConfValidator, issues: Issues, required: boolean): void {
  const items = issues.arr(v, path, required, required ? 1 : 0);
  items?.forEach((raw, i) => {
    const p = at(path, i);
    const item = issues.obj(raw, p);
    if (!item) return;
    validateTargetRef(item.targetRef, at(p, "targetRef"), { kinds }, issues);
    const def = issues.obj(item.default, at(p, "default"));
    if (def) conf(def, at(p, "default"), issues);
  });
}
