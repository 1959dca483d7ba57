// A MeshRateLimit `local` conf compiled once per client and route: the rate, its token bucket's key and the
// result within the limit, so such a decision only takes a token (no parsing, no strings built).
import type { RespondDecision } from "../../decision.js";
import { parseGoDurationMs } from "../documents/duration.js";
import type { ConfSource } from "../model/types.js";

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

export interface LimitResult {
  decision?: RespondDecision;
  outcome: string;
}

export interface RequestRate {
  num: number;
  intervalMs: number;
}

/** `local.http` → the rate to enforce, or undefined when limiting is off (disabled or no requestRate). */
export function httpRequestRate(local: unknown): RequestRate | undefined {
  const http = (local as { http?: { disabled?: boolean; requestRate?: { num?: number; interval?: string } } } | undefined)?.http;
  if (!http || http.disabled === true || !http.requestRate) return undefined;
  const intervalMs = parseGoDurationMs(http.requestRate.interval);
  const num = http.requestRate.num;
  if (!intervalMs || typeof num !== "number" || num < 1) return undefined;
  return { num, intervalMs };
}

/** Separates an inbound from a route inside it in bucket scopes: `<inbound>\u0001<route>`. */
export const ROUTE_SCOPE = "\u0001";

/** Key of the bucket of `rate` in `scope` (an inbound, or inbound + ROUTE_SCOPE + route). */
export function bucketKey(scope: string, rate: RequestRate): string {
  return `${scope}\u0000${rate.num}/${rate.intervalMs}`;
}
