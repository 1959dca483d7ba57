// Turns a matched MeshFaultInjection or MeshRateLimit conf into a local reply or a delay, and builds local
// replies. Shared by inbound decisions; no I/O. (Fitting delays to Envoy's timers and the explain header
// are the transport's job: extproc/transport/processor.ts and mapping.ts.)
import type { Explanation, RespondDecision } from "../../decision.js";
import { sampleFaults } from "./faults.js";
import type { FaultPlan } from "../plans/fault-plan.js";
import type { LimitPlan, LimitResult } from "../plans/limit-plan.js";
import type { BucketStore } from "./rate-limit.js";
import { splitValues } from "../plans/routes.js";

export interface EvalContext {
  nowMs: number;
  random: () => number;
  buckets: BucketStore;
  /** Explain mode: do not consume rate-limit tokens. */
  dryRun: boolean;
}

export function respond(status: number, body: string, headers: Array<[string, string]>, explain: Explanation, ctx: EvalContext): RespondDecision {
  return { type: "respond", status, body, headers: [...headers], explain };
}

export interface FaultResult {
  decision?: RespondDecision;
  delayMs: number;
  /** Present when a fault was sampled (a delay or an abort). */
  explain?: Explanation;
  outcome: string;
}

/** Who the client is, for reasons; a function so the text is only built when a reason is. */
export type Who = () => string;

/** Trace outcomes a client step can know before any request (client-steps.ts shares them as its usual outcome). */
export const NO_FAULT_SAMPLED_OUTCOME = "no fault sampled";
export const RATE_LIMITING_DISABLED_OUTCOME = "rate limiting disabled";

const NO_FAULT_SAMPLED: Readonly<FaultResult> = Object.freeze({ delayMs: 0, outcome: NO_FAULT_SAMPLED_OUTCOME });

export function faultDecision(plan: FaultPlan, who: Who, ctx: EvalContext): Readonly<FaultResult> {
  const sampled = sampleFaults(plan.faults, ctx.random);
  const delayMs = sampled.delayMs;
  if (!sampled.abort && delayMs === 0) return NO_FAULT_SAMPLED;
  const src = plan.sourceOf(sampled.abort?.element);
  const base = { kind: "MeshFaultInjection" as const, ...(src ? { policy: src.policy, rule: src.rule } : {}) };
  if (sampled.abort) {
    const explain: Explanation = { ...base, action: "abort", reason: `${who()}: abort ${sampled.abort.httpStatus} from http[${sampled.abort.element}]` };
    const decision = respond(sampled.abort.httpStatus, "fault filter abort", [], explain, ctx);
    if (delayMs > 0) decision.delayMs = delayMs;
    return { decision, delayMs, explain, outcome: `abort ${sampled.abort.httpStatus}` };
  }
  const explain: Explanation = { ...base, action: "allow", reason: `${who()}: delayed ${delayMs}ms` };
  return { delayMs, explain, outcome: `delay ${delayMs}ms` };
}

interface OnRateLimit {
  status?: number;
  headers?: { set?: Array<{ name: string; value: string }>; add?: Array<{ name: string; value: string }> };
}

const RATE_LIMITING_DISABLED: Readonly<LimitResult> = Object.freeze({ outcome: RATE_LIMITING_DISABLED_OUTCOME });

/** Takes a token from the plan's bucket; over the limit, the conf's onRateLimit reply (429 by default). */
export function limitDecision(plan: LimitPlan, who: Who, ctx: EvalContext): Readonly<LimitResult> {
  const enforced = plan.enforced;
  if (!enforced) return RATE_LIMITING_DISABLED;
  const rate = enforced.rate;
  const bucket = ctx.buckets.getByKey(enforced.bucketKey, rate, ctx.nowMs);
  if (bucket.take(ctx.nowMs, ctx.dryRun)) return enforced.within;
  const on = (plan.local as { http?: { onRateLimit?: OnRateLimit } } | undefined)?.http?.onRateLimit ?? {};
  const headers: Array<[string, string]> = [];
  for (const h of on.headers?.set ?? []) for (const v of splitValues(h.value)) headers.push([h.name.toLowerCase(), v]);
  for (const h of on.headers?.add ?? []) headers.push([h.name.toLowerCase(), h.value]);
  const explain: Explanation = {
    action: "rate-limit",
    kind: "MeshRateLimit",
    ...(plan.source ? { policy: plan.source.policy, rule: plan.source.rule } : {}),
    reason: `${who()}: over ${rate.num} requests per ${rate.intervalMs}ms on inbound ${plan.inbound}`,
  };
  return { decision: respond(on.status ?? 429, "local_rate_limited", headers, explain, ctx), outcome: "rate limited" };
}
