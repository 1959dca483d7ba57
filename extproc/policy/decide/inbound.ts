// Decides one inbound request: MeshTrafficPermission (mtp.ts), then MeshFaultInjection (abort/delay), then
// MeshRateLimit (token bucket), each on the legacy `from` path or the 2.10+ `rules` path the compiled plan
// holds. What depends only on the client is worked out once (client-steps.ts); per request only faults are
// sampled and tokens taken. Returns the Decision plus a trace of what matched, for /explain.
import type { Decision, Explanation } from "../../decision.js";
import type { InboundPlan } from "../plans/compile.js";
import { clientSteps, faultStepOf, limitStepOf, type ClientStep } from "./client-steps.js";
import type { ClientIdentity } from "./identity.js";
import type { LimitPlan, LimitResult } from "../plans/limit-plan.js";
import type { FaultPlan } from "../plans/fault-plan.js";
import type { MtpEnv } from "./mtp.js";
import { faultDecision, limitDecision, respond, type EvalContext, type FaultResult } from "./outcomes.js";
import type { KindTrace } from "./trace.js";

export interface Evaluation {
  decision: Decision;
  trace: KindTrace[];
}

export function decideInbound(plan: InboundPlan, client: ClientIdentity, ctx: EvalContext, env: MtpEnv): Evaluation {
  const trace: KindTrace[] = [];
  const steps = clientSteps(plan, client, env);
  let allow: Explanation = plan.noMtp;

  const mtp = steps.mtp;
  if (mtp) {
    trace.push(mtp.trace);
    if (mtp.outcome.denied) return { decision: respond(403, "RBAC: access denied", [], mtp.outcome.explain, ctx), trace };
    allow = mtp.outcome.explain;
  }

  let delayMs = 0;
  const faultStep = steps.fault === undefined ? (steps.fault = faultStepOf(steps, client)) : steps.fault;
  const fault = faultStep ? sampleFault(faultStep, ctx, trace) : undefined;
  if (fault?.decision) return { decision: fault.decision, trace };
  if (fault?.explain && fault.delayMs > 0) {
    delayMs = fault.delayMs;
    if (allow.action !== "shadow-deny") allow = fault.explain;
    else allow = { ...allow, reason: `${allow.reason}; ${fault.explain.reason}` };
  }

  const limitStep = steps.limit === undefined ? (steps.limit = limitStepOf(steps, client)) : steps.limit;
  const limited = limitStep ? takeToken(limitStep, ctx, trace) : undefined;
  if (limited?.decision) {
    if (delayMs > 0) limited.decision.delayMs = delayMs;
    return { decision: limited.decision, trace };
  }

  const decision: Decision = { type: "continue", explain: allow };
  if (delayMs > 0) decision.delayMs = delayMs;
  return { decision, trace };
}

function sampleFault(step: ClientStep<FaultPlan>, ctx: EvalContext, trace: KindTrace[]): FaultResult | undefined {
  const fault = step.plan ? faultDecision(step.plan, step.who, ctx) : undefined;
  trace.push(traced(step, fault?.outcome));
  return fault;
}

function takeToken(step: ClientStep<LimitPlan>, ctx: EvalContext, trace: KindTrace[]): LimitResult | undefined {
  const limited = step.plan ? limitDecision(step.plan, step.who, ctx) : undefined;
  trace.push(traced(step, limited?.outcome));
  return limited;
}

/** The step's trace with this request's outcome (undefined: no rule for the client). */
function traced(step: ClientStep<unknown>, outcome: string | undefined): KindTrace {
  return outcome === undefined || outcome === step.usual.outcome ? step.usual : { ...step.usual, outcome };
}
