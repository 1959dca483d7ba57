// The control-plane client's timing: poll intervals with jitter, capped exponential backoff with jitter, and Retry-After read as seconds or an HTTP date.
import test from "ava";
import { Backoff, DEFAULT_BACKOFF, retryAfterMs, withJitter } from "../../extproc/policy-source/backoff.js";

test("jitter › given the lowest, middle and highest random draw, then the interval is base − fraction, base, base + fraction, rounded", (t) => {
  t.is(withJitter(1000, 0.2, () => 0), 800);
  t.is(withJitter(1000, 0.2, () => 0.5), 1000);
  t.is(withJitter(1000, 0.2, () => 1), 1200);
  t.is(withJitter(1000, 0.1, () => 0), 900);
  t.is(withJitter(3, 0.5, () => 0), 2, "1.5 rounds to 2");
  t.is(withJitter(10, 0.25, () => 0.05), 8, "7.75 rounds to 8");
});

test("jitter › given no fraction, then it is a fifth either way; given a fraction above 1, then the interval is never negative", (t) => {
  t.is(withJitter(1000, undefined, () => 0), 800);
  t.is(withJitter(1000, undefined, () => 1), 1200);
  t.is(withJitter(100, 2, () => 0), 0);
  for (let i = 0; i < 200; i++) {
    const ms = withJitter(1000);
    t.true(ms >= 800 && ms <= 1200, `${ms}`);
  }
});

test("backoff › given failures in a row, when each asks for a delay, then the ceiling doubles up to the cap and the delay lies between half of it and all of it", (t) => {
  const high = new Backoff({ initialMs: 100, maxMs: 1000, factor: 2 }, () => 1);
  t.deepEqual(Array.from({ length: 6 }, () => high.next()), [100, 200, 400, 800, 1000, 1000]);
  t.is(high.attempts, 6);
  const low = new Backoff({ initialMs: 100, maxMs: 1000, factor: 3 }, () => 0);
  t.deepEqual(Array.from({ length: 4 }, () => low.next()), [50, 150, 450, 500]);
  const mid = new Backoff({ initialMs: 101, maxMs: 1000, factor: 2 }, () => 0.5);
  t.is(mid.next(), 76, "50.5 + 25.25 rounds to 76");
});

test("backoff › given a reset after failures, then the next delay starts from the initial one again and no attempt is counted", (t) => {
  const b = new Backoff({ initialMs: 100, maxMs: 10_000, factor: 2 }, () => 1);
  b.next();
  b.next();
  t.is(b.attempts, 2);
  b.reset();
  t.is(b.attempts, 0);
  t.is(b.next(), 100);
  t.is(b.attempts, 1);
});

test("backoff › given no options, then it starts at 500 ms, doubles and stops at 30 s, with a random draw", (t) => {
  t.deepEqual(DEFAULT_BACKOFF, { initialMs: 500, maxMs: 30_000, factor: 2 });
  const b = new Backoff();
  t.is(b.attempts, 0);
  const first = b.next();
  t.true(first >= 250 && first <= 500, `${first}`);
  const second = b.next();
  t.true(second >= 500 && second <= 1000, `${second}`);
  for (let i = 0; i < 10; i++) b.next();
  const capped = b.next();
  t.true(capped >= 15_000 && capped <= 30_000, `${capped}`);
  const draws = new Set(Array.from({ length: 20 }, () => new Backoff().next()));
  t.true(draws.size > 1, "the delay is drawn, not fixed");
});

test("retry-after › given seconds, then milliseconds, capped at five minutes; given nothing or an unreadable value, then none", (t) => {
  t.is(retryAfterMs("5"), 5000);
  t.is(retryAfterMs("0"), 0);
  t.is(retryAfterMs("1.5"), 1500);
  t.is(retryAfterMs("300"), 300_000);
  t.is(retryAfterMs("301"), 300_000);
  t.is(retryAfterMs(null), undefined);
  t.is(retryAfterMs(""), undefined);
  t.is(retryAfterMs("soon"), undefined);
});

test("retry-after › given an HTTP date, then the time until it, never negative and capped at five minutes", (t) => {
  const now = Date.parse("Wed, 02 Dec 2026 10:00:00 GMT");
  t.is(retryAfterMs("Wed, 02 Dec 2026 10:00:30 GMT", now), 30_000);
  t.is(retryAfterMs("Wed, 02 Dec 2026 09:59:00 GMT", now), 0);
  t.is(retryAfterMs("Wed, 02 Dec 2026 11:00:00 GMT", now), 300_000);
  const soon = new Date(Date.now() + 60_000).toUTCString();
  const ms = retryAfterMs(soon)!;
  t.true(ms > 55_000 && ms <= 60_000, `${ms}`);
});

test("retry-after › given a value that is no sane delay (negative, infinite) or zero written otherwise, then never a negative or endless wait", (t) => {
  const cases: Array<[string, number | undefined, string]> = [
    ["0.0", 0, "zero seconds written with a fraction is still no wait"],
    ["Infinity", undefined, "an endless delay is no number of seconds"],
  ];
  for (const [header, want, why] of cases) t.is(retryAfterMs(header), want, why);
  for (const header of ["-5", "-1"]) {
    const ms = retryAfterMs(header);
    t.true(ms === undefined || ms >= 0, `${header}: never a negative wait (${ms})`);
  }
});
