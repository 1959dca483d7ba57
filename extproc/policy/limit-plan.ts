// A MeshRateLimit `local` conf compiled once per client and route: the rate, its token bucket's key and the
// texts of the outcome, so a decision within the limit only takes a token (no parsing, no strings built).
import type { ConfSource } from "./outcomes.js";
import { bucketKey, httpRequestRate, type RequestRate } from "./rate-limit.js";

export interface LimitPlan {
  inbound: string;
  /** The `local` conf as merged (its onRateLimit builds the reply when the limit is hit). */
  local: unknown;
  /** The rule an explanation names. */
  source?: ConfSource;
  /** Undefined: rate limiting is off for this client (disabled, or no requestRate). */
  rate?: RequestRate;
  /** The token bucket this client takes from (bucketKey of the route's scope and the rate). */
  bucketKey: string;
  /** Trace outcome when a token was taken: `within <num> per <interval>ms`. */
  withinOutcome: string;
}

/** `local` on `inbound`; `bucketScope` separates the token buckets of different routes (default: the inbound). */
export function limitPlan(inbound: string, local: unknown, source: ConfSource | undefined, bucketScope = inbound): LimitPlan {
  const rate = httpRequestRate(local);
  const plan: LimitPlan = { inbound, local, bucketKey: "", withinOutcome: "" };
  if (source) plan.source = source;
  if (rate) Object.assign(plan, { rate, bucketKey: bucketKey(bucketScope, rate), withinOutcome: `within ${rate.num} per ${rate.intervalMs}ms` });
  return plan;
}
