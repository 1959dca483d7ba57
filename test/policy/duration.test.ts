// duration › Go duration strings as Kuma reads them (time.ParseDuration): every unit, fractions, sums and a sign,
// and what is not a duration (no unit, spaces, a unit alone, negatives, non-strings).
import test from "ava";
import { parseGoDurationMs } from "../../extproc/policy/documents/duration.js";

const reads = test.macro({
  exec(t, text: unknown, expectedMs: number | undefined) {
    // Given a duration text; when parsed; then these milliseconds (undefined: not a duration)
    const ms = parseGoDurationMs(text);
    if (expectedMs === undefined) t.is(ms, undefined);
    else t.true(ms !== undefined && Math.abs(ms - expectedMs) < 1e-9, `${String(text)} → ${ms}`);
  },
  title: (provided = "", text: unknown) => `duration › ${JSON.stringify(text)} ${provided}`,
});

test("is 0", reads, "0", 0);
test("is 0 (a sign before a bare 0)", reads, "+0", 0);
test("is 0 with a unit", reads, "0s", 0);
test("is a nanosecond", reads, "1ns", 1e-6);
test("is a microsecond (us)", reads, "1us", 1e-3);
test("is a microsecond (micro sign)", reads, "1\u00b5s", 1e-3);
test("is a microsecond (Greek mu)", reads, "1\u03bcs", 1e-3);
test("is 100 ms", reads, "100ms", 100);
test("is many digits of ms", reads, "12345ms", 12345);
test("is a second", reads, "1s", 1000);
test("is a minute", reads, "1m", 60_000);
test("is an hour", reads, "1h", 3_600_000);
test("adds its parts", reads, "1h30m15s", 5_415_000);
test("adds a repeated unit", reads, "1m1m", 120_000);
test("takes a fraction", reads, "1.5h", 5_400_000);
test("takes a fraction of two digits", reads, "10.25s", 10_250);
test("takes a fraction without a leading digit", reads, ".25s", 250);
test("takes a trailing dot", reads, "1.s", 1000);
test("takes a plus sign", reads, "+2s", 2000);
test("is not a duration (empty)", reads, "", undefined);
test("is not a duration (a sign alone)", reads, "+", undefined);
test("is not a duration (no unit)", reads, "1", undefined);
test("is not a duration (no unit on a fraction)", reads, "1.5", undefined);
test("is not a duration (a unit alone)", reads, "s", undefined);
test("is not a duration (an unknown unit)", reads, "1d", undefined);
test("is not a duration (a space inside)", reads, "1 s", undefined);
test("is not a duration (a leading space)", reads, " 1s", undefined);
test("is not a duration (a trailing space)", reads, "1s ", undefined);
test("is not a duration (negative)", reads, "-1s", undefined);
test("is not a duration (a sign in the middle)", reads, "1h-1m", undefined);
test("is not a duration (a bare 0 after a part)", reads, "1s0", undefined);
test("is not a duration (two zeros)", reads, "00", undefined);
test("is not a duration (a number)", reads, 5, undefined);
test("is not a duration (null)", reads, null, undefined);
