// rate-limit › the token bucket refills like Envoy's local_ratelimit: `num` tokens per whole interval, on a
// fixed schedule counted from the bucket's start, never for a partial interval.
import test from "ava";
import { bucketKey, httpRequestRate, limitPlan } from "../../extproc/policy/plans/limit-plan.js";
import { BucketStore, TokenBucket } from "../../extproc/policy/decide/rate-limit.js";
import { limitScope } from "../../extproc/policy/decide/rules-decide.js";

function takeAll(bucket: TokenBucket, nowMs: number): number {
  let taken = 0;
  while (bucket.take(nowMs)) taken++;
  return taken;
}

test("rate-limit › refills advance by whole intervals, so a take mid-interval does not move the schedule", (t) => {
  // Planted bug this catches: in TokenBucket.refill, `this.lastFillMs = nowMs` instead of
  // `this.lastFillMs += fills * this.intervalMs` (the fill time drifts to the moment of the take);
  // the refill due at 1000 then only comes at 1250 and the t=1000 assertion fails.
  // given 2 per 500ms, emptied at 0
  const bucket = new TokenBucket(2, 500, 0);
  t.is(takeAll(bucket, 0), 2);
  // when a request comes at 750 (one refill, at 500, is due) and empties it again
  t.true(bucket.take(750), "the refill at 500 is there at 750");
  t.true(bucket.take(750));
  t.false(bucket.take(750), "empty again at 750");
  // then nothing more until 1000, and at 1000 exactly the next refill of 2
  t.false(bucket.take(999), "no token for the partial interval 750..999");
  t.is(takeAll(bucket, 1000), 2, "the refill at 1000 is on the schedule of whole intervals from 0");
});

test("rate-limit › a refill is due at the interval boundary, not one millisecond before", (t) => {
  // Planted bug this catches: `Math.ceil` instead of `Math.floor` when counting whole intervals elapsed
  // (a partial interval refills: 499 gets a token).
  const bucket = new TokenBucket(2, 500, 0);
  t.is(takeAll(bucket, 0), 2);
  t.false(bucket.take(499));
  t.true(bucket.take(500));
});

test("rate-limit › several missed intervals refill at most to capacity", (t) => {
  // given 2 per 500ms emptied at 0; when 10 intervals pass; then exactly 2 tokens, not 20
  const bucket = new TokenBucket(2, 500, 0);
  t.is(takeAll(bucket, 0), 2);
  t.is(bucket.remaining(5000), 2);
  t.is(takeAll(bucket, 5000), 2);
});

test("rate-limit › a dry run reports without taking", (t) => {
  const bucket = new TokenBucket(1, 1000, 0);
  t.true(bucket.take(0, true));
  t.is(bucket.remaining(0), 1);
  t.true(bucket.take(0));
  t.false(bucket.take(0, true));
});

test("rate-limit › a clock that goes back restarts the interval instead of refilling", (t) => {
  // given an emptied bucket at 10000; when the clock reads 9000 and then 9499; then still empty; at 9500 refilled
  const bucket = new TokenBucket(1, 500, 10_000);
  t.true(bucket.take(10_000));
  t.false(bucket.take(9_000));
  t.false(bucket.take(9_499));
  t.true(bucket.take(9_500));
});

test("rate-limit › local.http without a usable requestRate enforces nothing", (t) => {
  t.deepEqual(httpRequestRate({ http: { requestRate: { num: 2, interval: "500ms" } } }), { num: 2, intervalMs: 500 });
  t.is(httpRequestRate({ http: { disabled: true, requestRate: { num: 2, interval: "500ms" } } }), undefined);
  t.is(httpRequestRate({ http: {} }), undefined);
  t.is(httpRequestRate({ http: { requestRate: { num: 0, interval: "1s" } } }), undefined);
  t.is(httpRequestRate(undefined), undefined);
});

test("rate-limit › a route's bucket survives a reload that keeps its inbound, and goes with its inbound", (t) => {
  // given a bucket of a route inside inbound "web" (2 per second), one token taken
  const rate = { num: 2, intervalMs: 1000 };
  const store = new BucketStore();
  const key = bucketKey(limitScope("web", "prefix /api"), rate);
  t.true(store.getByKey(key, rate, 0).take(0));
  // when a reload keeps inbound "web"
  store.retain(new Set(["web"]));
  // then the route's bucket is the same one: one token left
  t.is(store.getByKey(key, rate, 0).remaining(0), 1);
  // and a route scope is not confused with another inbound whose name starts alike
  t.not(limitScope("web", "prefix /api"), limitScope("webprefix /api", "base"));
  // when a reload drops inbound "web", then the route's bucket starts full again
  store.retain(new Set(["api"]));
  t.is(store.getByKey(key, rate, 0).remaining(0), 2);
});

test("rate-limit › a local conf's plan: the rate, its bucket in the route's scope, the result within it; none when the rate is unusable", (t) => {
  const local = { http: { requestRate: { num: 3, interval: "2s" } } };
  const plan = limitPlan("web", local, { policy: "limit", rule: "rules[0]" }, "web\u0001prefix /a");
  t.deepEqual(plan.source, { policy: "limit", rule: "rules[0]" });
  t.deepEqual(plan.enforced, { rate: { num: 3, intervalMs: 2000 }, bucketKey: bucketKey("web\u0001prefix /a", { num: 3, intervalMs: 2000 }), within: { outcome: "within 3 per 2000ms" } });
  t.is(limitPlan("web", local, undefined).enforced!.bucketKey, bucketKey("web", { num: 3, intervalMs: 2000 }), "the inbound is the default scope");
  t.false("source" in limitPlan("web", local, undefined), "no rule named, no source");
  const unusable: [string, unknown][] = [
    ["no interval", { http: { requestRate: { num: 3 } } }],
    ["a bad interval", { http: { requestRate: { num: 3, interval: "soon" } } }],
    ["a zero interval", { http: { requestRate: { num: 3, interval: "0s" } } }],
    ["no num", { http: { requestRate: { interval: "1s" } } }],
    ["num as text", { http: { requestRate: { num: "3", interval: "1s" } } }],
  ];
  for (const [what, conf] of unusable) {
    t.is(httpRequestRate(conf), undefined, what);
    t.false("enforced" in limitPlan("web", conf, undefined), what);
  }
});
