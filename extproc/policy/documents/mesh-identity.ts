// MeshIdentity and MeshTrust (2.12+) as the engine reads them (meshidentity/api/v1alpha1/helpers.go and
// pkg/xds/context/mesh_context_builder.go at v2.14.3): which workload identity a Dataplane has — the best
// matching MeshIdentity, if it is Ready — and which trust domains the mesh's MeshTrusts give.
import type { Dataplane } from "../model/dataplane.js";
import { isObj, type Obj } from "./issues.js";

export interface MeshIdentityResource {
  kind: "MeshIdentity";
  mesh: string;
  name: string;
  /** `selector.dataplane.matchLabels`; undefined when the selector (or its dataplane part) is absent: matches nothing. */
  matchLabels?: Record<string, string>;
  /** Status condition Ready; a resource written without status (a policy directory, our control plane) counts as ready. */
  ready: boolean;
  /** `provider.type`: a Spire identity brings its own validation context, so MeshTrusts do not restrict its peers. */
  provider?: string;
}

export interface MeshTrustResource {
  kind: "MeshTrust";
  mesh: string;
  name: string;
  trustDomain: string;
}

export function meshIdentityFromSpec(mesh: string, name: string, spec: Obj, status: unknown): MeshIdentityResource {
  const selector = isObj(spec.selector) && isObj(spec.selector.dataplane) ? spec.selector.dataplane : undefined;
  const labels = selector ? (isObj(selector.matchLabels) ? (selector.matchLabels as Record<string, string>) : {}) : undefined;
  const conditions = isObj(status) && Array.isArray(status.conditions) ? status.conditions : undefined;
  const ready = conditions === undefined || conditions.some((c) => isObj(c) && c.type === "Ready" && c.status === "True");
  const provider = isObj(spec.provider) && typeof spec.provider.type === "string" ? { provider: spec.provider.type } : {};
  return { kind: "MeshIdentity", mesh, name, ...(labels ? { matchLabels: { ...labels } } : {}), ready, ...provider };
}

export function meshTrustFromSpec(mesh: string, name: string, spec: Obj): MeshTrustResource {
  return { kind: "MeshTrust", mesh, name, trustDomain: String(spec.trustDomain) };
}

/** MeshIdentities of the Dataplane's mesh whose matchLabels its labels contain (Kuma's AllMatched). */
export function matchingIdentities(identities: readonly MeshIdentityResource[], dp: Dataplane): MeshIdentityResource[] {
  const labels = dp.labels ?? {};
  return identities.filter((i) => i.mesh === dp.mesh && i.matchLabels && Object.entries(i.matchLabels).every(([k, v]) => labels[k] === v));
}

/**
 * The MeshIdentity a Dataplane gets: of the matching ones the most labels, then the smallest name (BestMatched),
 * and only if that one is Ready — a best match that is not ready leaves the proxy without identity (Kuma's
 * IdentityProviderManager does not fall back to a less specific one).
 */
export function dataplaneIdentity(identities: readonly MeshIdentityResource[], dp: Dataplane): MeshIdentityResource | undefined {
  const fits = matchingIdentities(identities, dp);
  fits.sort((a, b) => Object.keys(b.matchLabels!).length - Object.keys(a.matchLabels!).length || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return fits[0]?.ready ? fits[0] : undefined;
}

/**
 * Trust domains a proxy with `identity` accepts peers from: those of the mesh's MeshTrusts (Kuma builds one SPIFFE
 * validator per trust domain from them), or undefined when that does not restrict anything — no MeshTrust
 * known, or a Spire identity (SPIRE delivers the validation context).
 */
export function trustedDomains(trusts: readonly MeshTrustResource[], identity: MeshIdentityResource | undefined, mesh: string): ReadonlySet<string> | undefined {
  if (!identity || identity.provider === "Spire") return undefined;
  const domains = trusts.filter((t) => t.mesh === mesh).map((t) => t.trustDomain);
  return domains.length > 0 ? new Set(domains) : undefined;
}
