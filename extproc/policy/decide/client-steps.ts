// What one client gets on one inbound under the policy set in force, worked out once: the MeshTrafficPermission
// outcome, the fault list and the rate-limit plan, each with its trace. Kept on the client's cached identity, so
// a repeated client's decision only samples faults and takes a token, however many policies select the inbound.
import type { InboundPlan } from "../plans/compile.js";
import { decidingItem, matchFrom, type FromItem, type FromMatch } from "../plans/from-items.js";
import { compileFaults } from "./faults.js";
import { tagSetKey, type ClientFacts } from "../model/client.js";
import type { KindTrace } from "./trace.js";
import { limitPlan, type LimitPlan } from "../plans/limit-plan.js";
import { decideMtp, type MtpEnv, type MtpOutcome } from "./mtp.js";
import { NO_FAULT_SAMPLED_OUTCOME, RATE_LIMITING_DISABLED_OUTCOME, type Who } from "./outcomes.js";
import type { FaultPlan } from "../plans/fault-plan.js";
import type { ConfSource } from "../model/types.js";
import { decidingRule, layerLimits, limitScope, stackFaults } from "./rules-decide.js";

/** A client with its decision steps on the inbound it last called, kept by decide/identity.ts's cache. */
export interface ClientIdentity extends ClientFacts {
  /** This client's decision steps on the inbound it last called (client-steps.ts), worked out on first use. */
  steps?: ClientSteps;
}

export interface ClientSteps {
  /** The inbound plan (of the snapshot in force) these steps were worked out for. */
  inbound: InboundPlan;
  /** tagSetKey of the client's tags: what the legacy `from` paths key their regions by. */
  clientKey: string;
  /** Undefined: no MeshTrafficPermission applies (none selects the inbound and the mesh allows everything). */
  mtp?: { outcome: MtpOutcome; trace: KindTrace };
  /** Worked out on first use (a denied client never needs them); null: no policy of the kind selects the inbound. */
  fault?: ClientStep<FaultPlan> | null;
  limit?: ClientStep<LimitPlan> | null;
}

/** One kind's step for this client: its plan (undefined: no rule for the client) and its trace. */
export interface ClientStep<P> {
  plan?: P;
  who: Who;
  /** The trace of the usual outcome (no fault sampled, within the limit, no rule), shared by every request. */
  usual: KindTrace;
}

/** This client's steps on `plan`: the ones kept on the identity when they are for this plan, else worked out. */
export function clientSteps(plan: InboundPlan, client: ClientIdentity, env: MtpEnv): ClientSteps {
  const kept = client.steps;
  if (kept !== undefined && kept.inbound === plan) return kept;
  const steps = workOut(plan, client, env);
  client.steps = steps;
  return steps;
}

function workOut(plan: InboundPlan, client: ClientIdentity, env: MtpEnv): ClientSteps {
  const clientKey = client.key ?? tagSetKey(client.tags);
  const steps: ClientSteps = { inbound: plan, clientKey };
  const legacyMtp = plan.from.MeshTrafficPermission && !(env.identity !== undefined && env.traits.mtpIdentityRulesPath);
  const mtp = decideMtp(plan, client, clientKey, legacyMtp ? byTags(client, clientKey) : byId(client), env);
  if (mtp) {
    const trace: KindTrace = { kind: "MeshTrafficPermission", matches: mtp.matches ?? NO_MATCHES, outcome: mtp.outcome };
    if (plan.from.MeshTrafficPermission) trace.plan = plan.from.MeshTrafficPermission;
    if (plan.rules.MeshTrafficPermission) Object.assign(trace, { rules: plan.rules.MeshTrafficPermission, hits: mtp.hit ? [mtp.hit.entry] : [] });
    steps.mtp = { outcome: mtp, trace };
  }
  return steps;
}

// Reasons name the client by its tags on legacy paths and by its SPIFFE ID on rules paths; a Who builds the
// text only when a reason is written.
function byTags(client: ClientIdentity, clientKey: string): Who {
  return () => `client ${clientKey || "(no identity)"} via ${client.source}`;
}

function byId(client: ClientIdentity): Who {
  return () => `client ${client.spiffe ?? "(no SPIFFE ID)"}${client.sni ? ` sni ${client.sni}` : ""} via ${client.source}`;
}

/** The MeshFaultInjection step (null when no MFI selects the inbound). */
export function faultStepOf(steps: ClientSteps, client: ClientIdentity): ClientStep<FaultPlan> | null {
  const plan = steps.inbound;
  const rules = plan.rules.MeshFaultInjection;
  if (rules) {
    const stacked = stackFaults(rules, client);
    const faults = stacked.hits.length > 0 ? stacked : undefined;
    return step(faults, byId(client), { kind: "MeshFaultInjection", matches: NO_MATCHES, rules, hits: stacked.hits }, faults ? NO_FAULT_SAMPLED_OUTCOME : NO_RULE);
  }
  const mfi = plan.from.MeshFaultInjection;
  if (!mfi) return null;
  const matches = matchFrom(mfi, client.tags, steps.clientKey);
  const first = matches[0];
  return step(first && (first.faultPlan ??= fromFaultPlan(first)), byTags(client, steps.clientKey), { kind: mfi.kind, plan: mfi, matches }, first ? NO_FAULT_SAMPLED_OUTCOME : NO_RULE);
}

/** The MeshRateLimit step (null when no MRL selects the inbound). */
export function limitStepOf(steps: ClientSteps, client: ClientIdentity): ClientStep<LimitPlan> | null {
  const plan = steps.inbound;
  const name = plan.inbound.name;
  const rules = plan.rules.MeshRateLimit;
  if (rules) {
    const layered = layerLimits(rules, client);
    const limit = layered.conf ? (layered.limit ??= limitPlan(name, layered.conf.local, decidingRule(layered.hits, "local"), limitScope(name, layered.route))) : undefined;
    return step(limit, byId(client), { kind: "MeshRateLimit", matches: NO_MATCHES, rules, hits: layered.hits }, usualLimitOutcome(limit));
  }
  const mrl = plan.from.MeshRateLimit;
  if (!mrl) return null;
  const matches = matchFrom(mrl, client.tags, steps.clientKey);
  const first = matches[0];
  const limit = first ? (first.limitPlan ??= limitPlan(name, first.conf.local, source(decidingItem(first, "local")))) : undefined;
  return step(limit, byTags(client, steps.clientKey), { kind: mrl.kind, plan: mrl, matches }, usualLimitOutcome(limit));
}

/** The trace outcome when no rule of the kind applies to the client. */
const NO_RULE = "no rule for client";

/** The regions of a rules-path trace: none (frozen, so one array serves every request). */
const NO_MATCHES: readonly FromMatch[] = Object.freeze([]);

function step<P>(plan: P | undefined, who: Who, trace: Omit<KindTrace, "outcome">, usualOutcome: string): ClientStep<P> {
  const s: ClientStep<P> = { who, usual: { ...trace, outcome: usualOutcome } };
  if (plan) s.plan = plan;
  return s;
}

function usualLimitOutcome(limit: LimitPlan | undefined): string {
  if (!limit) return NO_RULE;
  return limit.enforced ? limit.enforced.within.outcome : RATE_LIMITING_DISABLED_OUTCOME;
}

/** A region's fault list compiled, every element named after the item that last set `http`. */
function fromFaultPlan(match: FromMatch): FaultPlan {
  const src = source(decidingItem(match, "http"));
  return { faults: compileFaults(match.conf.http), sourceOf: () => src };
}

function source(item: FromItem | undefined): ConfSource | undefined {
  return item ? { policy: item.policy.name, rule: `from[${item.index}]` } : undefined;
}
