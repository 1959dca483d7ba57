// The decide stage's registry of policy kinds: one entry per kind. An inbound kind's entry is its step on an
// inbound request — what it works out once per client (kept in client-steps.ts's cache) and what it does per
// request (a reply that ends the request, or a change to the allowing explanation and the delay); inbound.ts
// runs the steps in `order`. An outbound kind's entry names the path that decides it (outbound.ts).
import type { Decision, Explanation } from "../../decision.js";
import { decidingItem, matchFrom, type FromMatch } from "../plans/from-items.js";
import type { FaultPlan } from "../plans/fault-plan.js";
import { limitPlan, type LimitPlan } from "../plans/limit-plan.js";
import type { PolicyType } from "../model/types.js";
import { byId, byTags, NO_MATCHES, NO_RULE, source, step, type ClientIdentity, type ClientStep, type ClientSteps } from "./client-steps.js";
import { compileFaults } from "./faults.js";
import { decideMtp, type MtpEnv, type MtpOutcome } from "./mtp.js";
import { faultDecision, limitDecision, NO_FAULT_SAMPLED_OUTCOME, RATE_LIMITING_DISABLED_OUTCOME, respond, type EvalContext } from "./outcomes.js";
import { decidingRule, layerLimits, limitScope, stackFaults } from "./rules-decide.js";
import type { KindTrace } from "./trace.js";

/** What the steps of one inbound request build up: the explanation of an allowed request and its delay. */
export interface InboundState {
  allow: Explanation;
  delayMs: number;
}

export interface InboundKind<P> {
  direction: "inbound";
  /** Its place on an inbound request's path: lower runs first. */
  order: number;
  /** Once per client and inbound: the client's step; null when no policy of the kind applies to the inbound. */
  stepOf(steps: ClientSteps, client: ClientIdentity, env: MtpEnv): ClientStep<P> | null;
  /** Per request: pushes the kind's trace; returns the reply when the kind ends the request, else may edit `state`. */
  apply(step: ClientStep<P>, ctx: EvalContext, state: InboundState, trace: KindTrace[]): Decision | undefined;
}

export interface OutboundKind {
  direction: "outbound";
}

/** Every kind of model/types.ts POLICY_TYPES, and only those (the mapped type makes a missing one a compile error). */
export const DECIDE_KINDS: { readonly [K in PolicyType]: InboundKind<unknown> | OutboundKind } = {
  MeshTrafficPermission: inbound<MtpOutcome>({
    direction: "inbound",
    order: 1,
    stepOf(steps, client, env) {
      const plan = steps.inbound;
      const legacy = plan.from.MeshTrafficPermission && !(env.identity !== undefined && env.traits.mtpIdentityRulesPath);
      const who = legacy ? byTags(client, steps.clientKey) : byId(client);
      const mtp = decideMtp(plan, client, who, env);
      if (!mtp) return null;
      const trace: KindTrace = { kind: "MeshTrafficPermission", matches: mtp.matches ?? NO_MATCHES, outcome: mtp.outcome };
      if (plan.from.MeshTrafficPermission) trace.plan = plan.from.MeshTrafficPermission;
      if (plan.rules.MeshTrafficPermission) Object.assign(trace, { rules: plan.rules.MeshTrafficPermission, hits: mtp.hit ? [mtp.hit.entry] : [] });
      return { plan: mtp, who, usual: trace };
    },
    apply(step, ctx, state, trace) {
      const outcome = step.plan!;
      trace.push(step.usual);
      if (outcome.denied) return respond(403, "RBAC: access denied", [], outcome.explain, ctx);
      state.allow = outcome.explain;
      return undefined;
    },
  }),
  MeshFaultInjection: inbound<FaultPlan>({
    direction: "inbound",
    order: 2,
    stepOf(steps, client) {
      const plan = steps.inbound;
      const rules = plan.rules.MeshFaultInjection;
      if (rules) {
        const stacked = stackFaults(rules, client);
        const faults = stacked.hits.length > 0 ? stacked : undefined;
        return step(faults, byId(client), { kind: "MeshFaultInjection", matches: NO_MATCHES, rules, hits: stacked.hits }, faults ? NO_FAULT_SAMPLED_OUTCOME : NO_RULE);
      }
      const mfi = plan.from.MeshFaultInjection;
      if (!mfi) return null;
      const matches = matchFrom(mfi, client.tags);
      const first = matches[0];
      return step(first && (first.faultPlan ??= fromFaultPlan(first)), byTags(client, steps.clientKey), { kind: mfi.kind, plan: mfi, matches }, first ? NO_FAULT_SAMPLED_OUTCOME : NO_RULE);
    },
    apply(step, ctx, state, trace) {
      const fault = step.plan ? faultDecision(step.plan, step.who, ctx) : undefined;
      trace.push(traced(step, fault?.outcome));
      if (fault?.decision) return fault.decision;
      if (fault?.explain && fault.delayMs > 0) {
        state.delayMs = fault.delayMs;
        if (state.allow.action !== "shadow-deny") state.allow = fault.explain;
        else state.allow = { ...state.allow, reason: `${state.allow.reason}; ${fault.explain.reason}` };
      }
      return undefined;
    },
  }),
  MeshRateLimit: inbound<LimitPlan>({
    direction: "inbound",
    order: 3,
    stepOf(steps, client) {
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
      const matches = matchFrom(mrl, client.tags);
      const first = matches[0];
      const limit = first ? (first.limitPlan ??= limitPlan(name, first.conf.local, source(decidingItem(first, "local")))) : undefined;
      return step(limit, byTags(client, steps.clientKey), { kind: mrl.kind, plan: mrl, matches }, usualLimitOutcome(limit));
    },
    apply(step, ctx, _state, trace) {
      const limited = step.plan ? limitDecision(step.plan, step.who, ctx) : undefined;
      trace.push(traced(step, limited?.outcome));
      return limited?.decision;
    },
  }),
  MeshHTTPRoute: { direction: "outbound" },
};

/** The inbound kinds' entries in the order an inbound request meets them. */
export const INBOUND_STEPS: readonly InboundKind<unknown>[] = Object.values(DECIDE_KINDS)
  .filter((k): k is InboundKind<unknown> => k.direction === "inbound")
  .sort((a, b) => a.order - b.order);

/** Types an entry's methods by its plan type `P` (each entry's step and apply see the same plan). */
function inbound<P>(kind: InboundKind<P>): InboundKind<unknown> {
  return kind;
}

/** The step's trace with this request's outcome (undefined: no rule for the client). */
function traced(step: ClientStep<unknown>, outcome: string | undefined): KindTrace {
  return outcome === undefined || outcome === step.usual.outcome ? step.usual : { ...step.usual, outcome };
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
