// MeshIdentity (2.12+): which workload identity a Dataplane has (meshidentity/api/v1alpha1 helpers at v2.14.3).
// Only whether the proxy has one matters to the engine: from v2.14.0 such a proxy ignores every `from`
// MeshTrafficPermission and, without MTP rules, denies all.
import type { Dataplane } from "../model/dataplane.js";
import { isObj, type Obj } from "./issues.js";

export interface MeshIdentityResource {
  kind: "MeshIdentity";
  mesh: string;
  name: string;
  /** `selector.dataplane.matchLabels`; undefined when the selector (or its dataplane part) is absent: matches nothing. */
  matchLabels?: Record<string, string>;
  /** Status condition Ready; a resource written without status (a policy directory) counts as ready. */
  ready: boolean;
}

export function meshIdentityFromSpec(mesh: string, name: string, spec: Obj, status: unknown): MeshIdentityResource {
  const selector = isObj(spec.selector) && isObj(spec.selector.dataplane) ? spec.selector.dataplane : undefined;
  const labels = selector ? (isObj(selector.matchLabels) ? (selector.matchLabels as Record<string, string>) : {}) : undefined;
  const conditions = isObj(status) && Array.isArray(status.conditions) ? status.conditions : undefined;
  const ready = conditions === undefined || conditions.some((c) => isObj(c) && c.type === "Ready" && c.status === "True");
  return { kind: "MeshIdentity", mesh, name, ...(labels ? { matchLabels: { ...labels } } : {}), ready };
}

/** The MeshIdentity a Dataplane gets: ready ones whose matchLabels its labels contain; most labels, then smallest name. */
export function dataplaneIdentity(identities: readonly MeshIdentityResource[], dp: Dataplane): MeshIdentityResource | undefined {
  const labels = dp.labels ?? {};
  const fits = identities.filter((i) => i.mesh === dp.mesh && i.ready && i.matchLabels && Object.entries(i.matchLabels).every(([k, v]) => labels[k] === v));
  fits.sort((a, b) => Object.keys(b.matchLabels!).length - Object.keys(a.matchLabels!).length || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return fits[0];
}
