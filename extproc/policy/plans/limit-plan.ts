// A MeshRateLimit `local` conf compiled once per client and route: the rate, its token bucket's key and the
// result within the limit, so such a decision only takes a token (no parsing, no strings built).
import type { ConfSource, LimitResult } from "../decide/outcomes.js";
import { bucketKey, httpRequestRate, type RequestRate } from "../decide/rate-limit.js";

export interface LimitPlan {
  inbound: string;
  /** The `local` conf as merged (its onRateLimit builds the reply when the limit is hit). */
  local: unknown;
  /** The rule an explanation names. */
  source?: ConfSource;
  /** Undefined: rate limiting is off for this client (disabled, or no requestRate). */
  enforced?: EnforcedRate;
}

export interface EnforcedRate {
  rate: RequestRate;
  /** The token bucket this client takes from (bucketKey of the route's scope and the rate). */
  bucketKey: string;
  /** The result when a token was taken (outcome `within <num> per <interval>ms`), the same for every request. */
  within: Readonly<LimitResult>;
}

/** `local` on `inbound`; `bucketScope` separates the token buckets of different routes (default: the inbound). */
export function limitPlan(inbound: string, local: unknown, source: ConfSource | undefined, bucketScope = inbound): LimitPlan {
  const plan: LimitPlan = { inbound, local };
  if (source) plan.source = source;
  const rate = httpRequestRate(local);
  if (rate) plan.enforced = { rate, bucketKey: bucketKey(bucketScope, rate), within: Object.freeze({ outcome: `within ${rate.num} per ${rate.intervalMs}ms` }) };
  return plan;
}
