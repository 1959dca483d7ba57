// Decides one inbound request: each inbound kind's step of kinds.ts in order — MeshTrafficPermission (mtp.ts),
// then MeshFaultInjection (abort/delay), then MeshRateLimit (token bucket) — each on the legacy `from` path or
// the 2.10+ `rules` path the compiled plan holds. What depends only on the client is worked out once
// (client-steps.ts); per request only faults are sampled and tokens taken. Returns the Decision plus a trace
// of what matched, for /explain.
import type { Decision } from "../../decision.js";
import type { InboundPlan } from "../plans/compile.js";
import { clientSteps } from "./client-steps.js";
import type { ClientIdentity } from "./identity.js";
import { INBOUND_STEPS, type InboundState } from "./kinds.js";
import type { MtpEnv } from "./mtp.js";
import type { EvalContext } from "./outcomes.js";
import type { KindTrace } from "./trace.js";

export interface Evaluation {
  decision: Decision;
  trace: KindTrace[];
}

export function decideInbound(plan: InboundPlan, client: ClientIdentity, ctx: EvalContext, env: MtpEnv): Evaluation {
  const trace: KindTrace[] = [];
  const steps = clientSteps(plan, client);
  const state: InboundState = { allow: plan.noMtp, delayMs: 0 };
  for (let i = 0; i < INBOUND_STEPS.length; i++) {
    const kind = INBOUND_STEPS[i]!;
    let step = steps.kinds[i];
    if (step === undefined) step = steps.kinds[i] = kind.stepOf(steps, client, env);
    if (step === null) continue;
    const reply = kind.apply(step, ctx, state, trace);
    if (reply) {
      // A reply keeps the delay of the kinds before it (a 429 after a sampled fault delay is delayed too).
      if (state.delayMs > 0) reply.delayMs = state.delayMs;
      return { decision: reply, trace };
    }
  }
  const decision: Decision = { type: "continue", explain: state.allow };
  if (state.delayMs > 0) decision.delayMs = state.delayMs;
  return { decision, trace };
}
