// What one client gets on one inbound under the policy set in force, worked out once: each inbound kind's step
// (kinds.ts: the MeshTrafficPermission outcome, the fault list, the rate-limit plan), each with its trace. Kept
// on the client's cached identity, so a repeated client's decision only samples faults and takes a token,
// however many policies select the inbound. Here: the cache and what the kinds' steps share.
import type { InboundPlan } from "../plans/compile.js";
import type { FromItem, FromMatch } from "../plans/from-items.js";
import { tagSetKey, type ClientFacts } from "../model/client.js";
import type { KindTrace } from "./trace.js";
import type { Who } from "./outcomes.js";
import type { ConfSource } from "../model/types.js";

/** A client with its decision steps on the inbound it last called, kept by decide/identity.ts's cache. */
export interface ClientIdentity extends ClientFacts {
  /** This client's decision steps on the inbound it last called (client-steps.ts), worked out on first use. */
  steps?: ClientSteps;
}

export interface ClientSteps {
  /** The inbound plan (of the snapshot in force) these steps were worked out for. */
  inbound: InboundPlan;
  /** tagSetKey of the client's tags: how legacy-path reasons name the client. */
  clientKey: string;
  /**
   * One per entry of kinds.ts INBOUND_STEPS, at its index, worked out on first use (a denied client never needs
   * the later ones): undefined until then, null when no policy of the kind applies to this inbound.
   */
  kinds: Array<ClientStep<unknown> | null | undefined>;
}

/** One kind's step for this client: its plan (undefined: no rule for the client) and its trace. */
export interface ClientStep<P> {
  plan?: P;
  who: Who;
  /** The trace of the usual outcome (no fault sampled, within the limit, no rule), shared by every request. */
  usual: KindTrace;
}

/** This client's steps on `plan`: the ones kept on the identity when they are for this plan, else a fresh set. */
export function clientSteps(plan: InboundPlan, client: ClientIdentity): ClientSteps {
  const kept = client.steps;
  if (kept !== undefined && kept.inbound === plan) return kept;
  const steps: ClientSteps = { inbound: plan, clientKey: client.key ?? tagSetKey(client.tags), kinds: [] };
  client.steps = steps;
  return steps;
}

// Reasons name the client by its tags on legacy paths and by its SPIFFE ID on rules paths; a Who builds the
// text only when a reason is written.
export function byTags(client: ClientIdentity, clientKey: string): Who {
  return () => `client ${clientKey || "(no identity)"} via ${client.source}`;
}

export function byId(client: ClientIdentity): Who {
  return () => `client ${client.spiffe ?? "(no SPIFFE ID)"}${client.sni ? ` sni ${client.sni}` : ""} via ${client.source}`;
}

/** The trace outcome when no rule of the kind applies to the client. */
export const NO_RULE = "no rule for client";

/** The regions of a rules-path trace: none (frozen, so one array serves every request). */
export const NO_MATCHES: readonly FromMatch[] = Object.freeze([]);

export function step<P>(plan: P | undefined, who: Who, trace: Omit<KindTrace, "outcome">, usualOutcome: string): ClientStep<P> {
  const s: ClientStep<P> = { who, usual: { ...trace, outcome: usualOutcome } };
  if (plan) s.plan = plan;
  return s;
}

export function source(item: FromItem | undefined): ConfSource | undefined {
  return item ? { policy: item.policy.name, rule: `from[${item.index}]` } : undefined;
}
