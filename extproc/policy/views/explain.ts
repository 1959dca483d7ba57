// /explain: given a described request (direction, client tags or XFCC, method, path, headers), evaluate it
// without side effects and report the decision, the policies that matched in precedence order, and the
// merged conf per kind. Transport-free: takes plain JSON, builds RequestFacts.
import type { Decision, RequestFacts } from "../../decision.js";
import type { Snapshot } from "../plans/compile.js";
import type { PolicyEngine } from "../decide/engine.js";
import { dataplaneRules, type InspectRules } from "./inspect.js";
import { regionTags } from "../plans/from-items.js";
import { describedIdentity, tagSetToObject, type ClientIdentity } from "../decide/identity.js";
import { at, Issues } from "../documents/issues.js";
import { tagSet } from "../selection/match.js";
import { buildRules, type KumaRule } from "../plans/rules.js";
import { groupingOf } from "../plans/subset-groups.js";
import { versionTraits } from "../model/kuma-version.js";
import type { SelectionCounts } from "../selection/select.js";
import type { Tag, Violation } from "../model/types.js";

export interface PolicyReport {
  kind: string;
  name: string;
  origin?: string;
  targetRef: unknown;
  /** Whether one of its items/rules applies to this request. */
  contributed: boolean;
  /** Why a selecting policy took no part (e.g. a `from` MTP on an inbound with rules). */
  ignored?: string;
}

export interface ExplainReport {
  decision: Decision;
  /** Policies the source delivered (`total`) and those kept because they can select this dataplane. */
  selection?: SelectionCounts;
  direction: "inbound" | "outbound";
  inbound?: { name: string; tags: Readonly<Record<string, string>> };
  destination?: string;
  client?: { source: string; tags: Record<string, string[]>; ignored: string[] };
  /** Inbound: this proxy's mTLS as the engine sees it (Mesh resource and MeshIdentity, 2.12+) and the MeshTrusts' trust domains. */
  proxy?: { mtls: "on" | "off" | "unknown"; identity?: string; trustDomains?: string[] };
  policies: PolicyReport[];
  merged: Record<string, unknown>;
  regions?: Record<string, Array<{ subset: Tag[]; conf: unknown; from: string[] }>>;
  rules?: Record<string, KumaRule[]>;
  /** With `rules: true`: this dataplane's rule view in the shape of Kuma's `/dataplanes/{name}/_rules`. */
  dataplaneRules?: InspectRules;
  /** MeshHTTPRoute filters of the matched rule that ext_proc cannot apply (RequestMirror, backendRefs, …). */
  notApplied?: string[];
  /** Rules path (2.10+): per kind, the rules that applied to this client, in the order they were applied. */
  matchedRules?: Record<string, Array<{ policy: string; rule: string; match: unknown; conf: unknown }>>;
}

export interface ExplainInput {
  facts: RequestFacts;
  identity?: ClientIdentity;
  inbound?: string;
  withRules: boolean;
}

/** Validates an /explain body; every problem is reported as a violation. */
/** `mesh`: the local mesh, whose trust domain a described SPIFFE ID's legacy tags are read in. */
export function parseExplainInput(body: unknown, mesh = "default"): { input?: ExplainInput; violations: Violation[] } {
  const issues = new Issues();
  const o = issues.obj(body, "body") ?? {};
  const direction = issues.oneOf(o.direction ?? "inbound", "direction", ["inbound", "outbound"] as const) ?? "inbound";
  const headers = new Map<string, string>();
  const h = issues.stringMap(o.headers, "headers", false) ?? {};
  for (const [k, v] of Object.entries(h)) headers.set(k.toLowerCase(), String(v));
  const client = issues.obj(o.client, "client", false) ?? {};
  const xfcc = issues.str(client.xfcc, at("client", "xfcc"), false);
  if (xfcc) headers.set("x-forwarded-client-cert", xfcc);
  const kumaTags = issues.str(client.kumaTags, at("client", "kumaTags"), false);
  if (kumaTags) headers.set("x-kuma-tags", kumaTags);
  const uriSans = (issues.arr(client.uriSans, at("client", "uriSans"), false) ?? []).filter((u): u is string => typeof u === "string");
  let identity: ClientIdentity | undefined;
  const sni = issues.str(client.sni, at("client", "sni"), false);
  if (client.spiffeID !== undefined) {
    const ids = typeof client.spiffeID === "string" ? [client.spiffeID] : client.spiffeID;
    if (!Array.isArray(ids) || ids.length === 0 || !ids.every((x) => typeof x === "string" && x !== "")) issues.add(at("client", "spiffeID"), "must be a SPIFFE ID or a list of URI SANs");
    else identity = describedIdentity(ids as string[], mesh, sni);
  }
  if (client.tags !== undefined) {
    const tags = issues.obj(client.tags, at("client", "tags"));
    const ok = tags && Object.values(tags).every((v) => typeof v === "string" || (Array.isArray(v) && v.every((x) => typeof x === "string")));
    if (tags && !ok) issues.add(at("client", "tags"), "must map tag keys to a string or a list of strings");
    if (tags && ok) identity = { ...(identity ?? { source: "described", ignored: [] }), tags: tagSet(tags as Record<string, string | string[]>) };
  }
  const method = (issues.str(o.method, "method", false) ?? "GET").toUpperCase();
  const path = issues.str(o.path, "path", false) ?? "/";
  const authority = issues.str(o.authority, "authority", false) ?? headers.get(":authority") ?? "";
  const inbound = o.inbound === undefined ? undefined : String(o.inbound);
  if (issues.list.length > 0) return { violations: issues.list };
  const facts: RequestFacts = { direction, method, path, authority, scheme: "http", headers, peerUriSans: uriSans, ...(sni ? { sni } : {}) };
  return { input: { facts, identity, inbound, withRules: o.rules === true }, violations: [] };
}

export function explainRequest(engine: PolicyEngine, input: ExplainInput): ExplainReport {
  const ev = engine.evaluate(input.facts, { dryRun: true, identity: input.identity, inbound: input.inbound });
  const kept = ev.snapshot?.policies.length;
  const selection = engine.selectionCounts() ?? (kept === undefined ? undefined : { kept, total: kept });
  const report: ExplainReport = { decision: ev.decision, ...(selection ? { selection } : {}), direction: input.facts.direction, policies: [], merged: {} };
  if (ev.outbound) {
    const ob = ev.outbound;
    report.destination = ob.service;
    const contributing = new Set(ob.matched?.rule.sources.map((s) => s.policy) ?? []);
    for (const p of ev.snapshot?.outbound.routes ?? []) report.policies.push(policyReport(p, contributing.has(p)));
    if (ob.matched) report.merged.MeshHTTPRoute = ob.matched.rule.default;
    if (input.withRules) report.rules = { MeshHTTPRoute: ob.rules.map((r) => ({ subset: [], conf: { matches: r.matches, default: r.default }, origin: r.sources.map((s) => `${s.policy.name} ${s.rule}`) })) };
    if (input.withRules && ev.snapshot) report.dataplaneRules = rulesView(ev.snapshot);
    if (ob.notApplied && ob.notApplied.length > 0) report.notApplied = ob.notApplied;
    return report;
  }
  if (ev.identity) {
    const source = ev.identity.source;
    report.client = { source, tags: tagSetToObject(ev.identity.tags), ignored: ev.identity.ignored };
  }
  if (ev.inbound) report.inbound = { name: ev.inbound.inbound.name, tags: ev.inbound.inbound.tags };
  if (ev.snapshot) {
    const { identity, mtls, trustDomains } = ev.snapshot;
    const state = identity !== undefined || mtls === true ? "on" : mtls === false ? "off" : "unknown";
    report.proxy = { mtls: state, ...(identity !== undefined ? { identity } : {}), ...(trustDomains ? { trustDomains: [...trustDomains].sort() } : {}) };
  }
  report.regions = {};
  for (const t of ev.trace) {
    if (t.rules) {
      const hit = new Set((t.hits ?? []).map((h) => h.policy));
      for (const p of t.rules.policies) report.policies.push(policyReport(p, hit.has(p)));
      for (const p of t.rules.ignoredFrom) report.policies.push({ ...policyReport(p, false), ignored: "from-based policy on an inbound with rules" });
      report.matchedRules ??= {};
      report.matchedRules[t.kind] = (t.hits ?? []).map((h) => ({ policy: h.policy.name, rule: h.rule, match: h.matches?.[0] ?? null, conf: h.conf }));
      continue;
    }
    if (!t.plan) continue;
    const plan = t.plan;
    const contributing = new Set(t.matches.flatMap((m) => m.items.map((i) => i.policy)));
    for (const p of plan.policies) report.policies.push(policyReport(p, contributing.has(p)));
    if (t.matches[0]) report.merged[t.kind] = t.matches[0].conf;
    report.regions[t.kind] = t.matches.map((m) => ({ subset: regionTags(plan, m.positives), conf: m.conf, from: m.items.map((i) => `${i.policy.name} from[${i.index}]`) }));
  }
  if (input.withRules && ev.inbound) {
    report.rules = {};
    for (const [kind, plan] of Object.entries(ev.inbound.from)) report.rules[kind] = buildRules(plan.items, groupingOf(ev.snapshot?.traits ?? versionTraits())).rules;
  }
  if (input.withRules && ev.snapshot) report.dataplaneRules = rulesView(ev.snapshot);
  return report;
}

function rulesView(snap: Snapshot): InspectRules {
  return dataplaneRules(snap.policies, snap.dataplane, { kumaVersion: snap.kumaVersion, resources: snap.resources });
}

function policyReport(p: { type: string; name: string; origin?: string; spec: { targetRef: unknown } }, contributed: boolean): PolicyReport {
  return { kind: p.type, name: p.name, ...(p.origin ? { origin: p.origin } : {}), targetRef: p.spec.targetRef, contributed };
}

