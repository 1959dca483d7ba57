// Local HTTP rate limit as Envoy's local_ratelimit does it: a token bucket of `num` tokens refilled with
// `num` tokens every `interval` (discrete fills), one bucket per inbound and conf. Clock injected (ms).
import { bucketKey, ROUTE_SCOPE, type RequestRate } from "../plans/limit-plan.js";

export class TokenBucket {
  private tokens: number;
  private lastFillMs: number;

  constructor(
    readonly capacity: number,
    readonly intervalMs: number,
    nowMs: number,
  ) {
    this.tokens = capacity;
    this.lastFillMs = nowMs;
  }

  /** Takes one token if there is one; `dryRun` only reports. */
  take(nowMs: number, dryRun = false): boolean {
    this.refill(nowMs);
    if (this.tokens < 1) return false;
    if (!dryRun) this.tokens -= 1;
    return true;
  }

  remaining(nowMs: number): number {
    this.refill(nowMs);
    return this.tokens;
  }

  private refill(nowMs: number): void {
    if (nowMs < this.lastFillMs) this.lastFillMs = nowMs; // clock went back: restart the interval
    const fills = Math.floor((nowMs - this.lastFillMs) / this.intervalMs);
    if (fills <= 0) return;
    this.tokens = Math.min(this.capacity, this.tokens + fills * this.capacity);
    this.lastFillMs += fills * this.intervalMs;
  }
}

/** Buckets that survive policy reloads while their inbound and rate stay the same. */
export class BucketStore {
  private buckets = new Map<string, TokenBucket>();

  get(inbound: string, rate: RequestRate, nowMs: number): TokenBucket {
    return this.getByKey(bucketKey(inbound, rate), rate, nowMs);
  }

  /** The bucket under `key` (bucketKey(scope, rate), built once by the caller), created full when new. */
  getByKey(key: string, rate: RequestRate, nowMs: number): TokenBucket {
    let b = this.buckets.get(key);
    if (!b) {
      b = new TokenBucket(rate.num, rate.intervalMs, nowMs);
      this.buckets.set(key, b);
    }
    return b;
  }

  /** Drops buckets whose key is not in `keep` (called after a reload). */
  retain(keep: ReadonlySet<string>): void {
    for (const k of this.buckets.keys()) if (!keep.has(k.split("\u0000")[0]!.split(ROUTE_SCOPE)[0]!)) this.buckets.delete(k);
  }
}
