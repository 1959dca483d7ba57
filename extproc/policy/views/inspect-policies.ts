// Kuma 2.12+'s per-proxy inspect views as pure functions (`matchedPoliciesToProxyPolicy`,
// `matchedPoliciesToInboundConfig` and `matchedPoliciesToRoutes` in pkg/api-server/resource_endpoints.go at
// v2.14.3; shapes PoliciesList, InboundPoliciesList and RoutesList of api/openapi/specs/common/resource.yaml):
// `GET /meshes/{mesh}/dataplanes/{name}/_policies`, `…/_inbounds/{inbound-kri}/_policies` and
// `…/_outbounds/{kri}/_routes`. Policies are named by KRI (`kri_<short>_<mesh>_<zone>_<namespace>_<name>_`).
import { compile, routeTableFor, type InboundPlan, type OutboundPlan } from "../plans/compile.js";
import type { Dataplane, Inbound } from "../model/dataplane.js";
import { portSectionName, NO_RESOURCES, type ServiceResource } from "../documents/resources.js";
import { KIND_TRAITS, POLICY_TYPES, type Policy, type PolicyType } from "../model/types.js";
import { mergeOrderOrigins, policyKri, type InspectOptions } from "./inspect.js";
import { refResolvesTo, type Destination } from "../plans/destinations.js";
import { INSPECT_ORDER, withDefaultWeights } from "./inspect-rules.js";

/** A parsed KRI (kri.FromString): `kri_<short>_<mesh>_<zone>_<namespace>_<name>_<section>`. */
export interface Kri {
  shortName: string;
  mesh: string;
  zone: string;
  namespace: string;
  name: string;
  sectionName: string;
}

/** kri.FromString: an error text as Kuma words it, for a 400. */
export function parseKri(text: string): Kri | { error: string } {
  const parts = text.split("_");
  if (parts.length < 7) return { error: `invalid identifier string: ${JSON.stringify(text)}` };
  if (parts[0] !== "kri") return { error: `identifier must start with 'kri': ${JSON.stringify(text)}` };
  const known = [...POLICY_TYPES.map((t) => KIND_TRAITS[t].shortName), ...Object.values(SERVICE_SHORT_NAMES), "dp", "mesh"];
  if (!known.includes(parts[1]!)) return { error: `unknown short name of resource type: ${JSON.stringify(parts[1])}` };
  return { shortName: parts[1]!, mesh: parts[2]!, zone: parts[3]!, namespace: parts[4]!, name: parts[5]!, sectionName: parts.slice(6).join("") };
}

const SERVICE_SHORT_NAMES: Readonly<Record<ServiceResource["kind"], string>> = { MeshService: "msvc", MeshExternalService: "extsvc", MeshMultiZoneService: "mzsvc" };

/** `_policies`: proxy-level confs of single-item policies (a top-level `spec.default`); none of the kinds meshext decides is one. */
export function proxyPolicies(): { policies: unknown[] } {
  return { policies: [] };
}

export interface InboundPolicyConf {
  kind: PolicyType;
  origins: Array<{ kri: string }>;
  rules: Array<{ conf: unknown; kri: string }>;
}

/** `_inbounds/{kri}/_policies`: per kind, the inbound's rules (each with its policy's KRI) and their policies once; undefined when no inbound has that section name. */
export function inboundPolicies(policies: readonly Policy[], dp: Dataplane, sectionName: string, opts: InspectOptions = {}): { policies: InboundPolicyConf[] } | undefined {
  const snap = compile(policies, dp, 0, { kumaVersion: opts.kumaVersion, resources: opts.resources ?? NO_RESOURCES });
  const plan = snap.inbounds.find((p) => bySection(p.inbound, sectionName)) ?? undefined;
  if (!plan) return undefined;
  const out: InboundPolicyConf[] = [];
  for (const type of INSPECT_ORDER) {
    const rules = rulesOf(plan, type);
    if (rules.length === 0) continue;
    const origins = [...new Map(rules.map((r) => [r.kri, { kri: r.kri }])).values()];
    out.push({ kind: type, origins, rules });
  }
  return { policies: out };
}

/** InboundsSelectedBySectionName: the inbound's `name`, else its port as text. */
function bySection(ib: Inbound, section: string): boolean {
  return ib.declaredName === section || (ib.declaredName === undefined && ib.port !== undefined && String(ib.port) === section);
}

function rulesOf(plan: InboundPlan, type: PolicyType): Array<{ conf: unknown; kri: string }> {
  const kind = type as keyof InboundPlan["rules"];
  const rules = plan.rules[kind];
  if (rules) return rules.rules.map((e) => ({ conf: e.conf, kri: policyKri(e.policy) }));
  const from = plan.from[kind];
  if (from && KIND_TRAITS[type].fromAsRules) return from.items.map((i) => ({ conf: i.conf, kri: policyKri(i.policy) }));
  return [];
}

export interface RouteConf {
  kind: "MeshHTTPRoute";
  origins: Array<{ kri: string }>;
  rules: Array<{ conf: unknown; kri: string; matches: unknown[] }>;
}

/**
 * `_outbounds/{kri}/_routes`: the merged MeshHTTPRoute rules towards one service port, each with the KRI of
 * the route that last set it (OriginByMatches), and the routes in merge order. An outbound that names no
 * known service, or one no route reaches, has no routes.
 */
export function outboundRoutes(policies: readonly Policy[], dp: Dataplane, outbound: Kri, opts: InspectOptions = {}): { routes: RouteConf[] } {
  const snap = compile(policies, dp, 0, { kumaVersion: opts.kumaVersion, resources: opts.resources ?? NO_RESOURCES });
  const plan = snap.outbound;
  const dest = outboundDestination(plan, outbound);
  if (!dest || plan.routes.length === 0) return { routes: [] };
  const table = routeTableFor(plan, dest.service.name, dest);
  if (table.rules.length === 0) return { routes: [] };
  const entries = [...plan.meshEntries, ...plan.entries.filter((e) => refResolvesTo(e.item.targetRef, e.policy, dest))];
  const origins = mergeOrderOrigins(entries, snap.traits).map((o) => ({ kri: policyKri(byMeta(entries.map((e) => e.policy), o.resourceMeta.name)) }));
  // Kuma fills in `weight: 1` on backendRefs without one (its _routes/meshservice_meshhttproute golden).
  const weighted = (withDefaultWeights({ rules: table.rules.map((r) => ({ matches: r.matches, default: r.default })) }) as { rules: Array<{ default: unknown }> }).rules;
  const rules = table.rules.map((r, i) => ({ conf: weighted[i]!.default, kri: policyKri(r.sources[r.sources.length - 1]!.policy), matches: r.matches }));
  return { routes: [{ kind: "MeshHTTPRoute", origins, rules }] };
}

/** The service port an outbound KRI names (its section: a port name or number; none: the only port), if a known service is meant. */
export function outboundDestination(plan: OutboundPlan, outbound: Kri): Destination | undefined {
  const service = plan.resources.services.find((s) => SERVICE_SHORT_NAMES[s.kind] === outbound.shortName && s.mesh === outbound.mesh && (s.displayName === outbound.name || s.name === outbound.name) && (outbound.namespace === "" || s.namespace === outbound.namespace));
  if (!service) return undefined;
  const port = outbound.sectionName === "" ? (service.ports.length === 1 ? service.ports[0] : undefined) : service.ports.find((p) => portSectionName(p) === outbound.sectionName || String(p.port) === outbound.sectionName);
  return { service, ...(port ? { port } : {}), key: `${service.kind}/${service.name}:${port ? portSectionName(port) : ""}` };
}

function byMeta(policies: readonly Policy[], name: string): Policy {
  return policies.find((p) => p.name === name)!;
}
