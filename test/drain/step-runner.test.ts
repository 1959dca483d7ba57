// drain › step runner: a step bounded by its timeout or cut short by a hurry when it asks to be, its outcome
// logged; a step that throws at once fails like one that rejects; sleeps end on time or on a hurry. Fake clock.
import test from "ava";
import { StepRunner } from "../../extproc/drain/step-runner.js";
import { isSkipped, skipped } from "../../extproc/drain/types.js";
import { FakeClock, settle } from "./fake-clock.js";

/** A runner on a fake clock that records its log lines and the timers it sets. */
function runner(done = () => false) {
  const clock = new FakeClock();
  const timers: number[] = [];
  const pending = new Set<unknown>();
  const [setTimeout, clearTimeout] = [clock.setTimeout.bind(clock), clock.clearTimeout.bind(clock)];
  clock.setTimeout = (fn: () => void, ms: number) => {
    timers.push(ms);
    const handle = setTimeout(() => (pending.delete(handle), fn()), ms);
    pending.add(handle);
    return handle;
  };
  clock.clearTimeout = (handle: unknown) => (pending.delete(handle), clearTimeout(handle));
  const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
  const log = { info: (fields: Record<string, unknown>, msg: string) => void lines.push({ level: "info", fields, msg }), warn: (fields: Record<string, unknown>, msg: string) => void lines.push({ level: "warn", fields, msg }) };
  return { clock, timers, pending, lines, steps: new StepRunner(clock, log, done, () => 42) };
}
const never = () => new Promise<void>(() => {});

test("step runner › given a step that never ends, when its timeout passes, then it is logged as a timeout with its time", async (t) => {
  const { clock, lines, steps } = runner();
  const ran = steps.step("quit", never, 500);
  await clock.advance(500);
  await ran;
  t.deepEqual(lines, [{ level: "warn", fields: { step: "quit", outcome: "timeout", ms: 500, afterMs: 42 }, msg: "drain step quit: timeout" }]);
});

test("step runner › given steps that succeed, skip, reject or throw at once, then each is logged with its outcome", async (t) => {
  const { lines, steps } = runner();
  await steps.step("a", async () => {}, 100);
  await steps.step("b", async () => skipped("no Envoy"), 100);
  await steps.step("c", () => Promise.reject(new Error("refused")), 100);
  await steps.step("d", () => {
    throw new Error("at once");
  }, 100);
  t.deepEqual(lines.map((l) => [l.level, l.fields.outcome, l.fields.err ?? l.fields.reason ?? null, l.msg]), [
    ["info", "ok", null, "drain step a: ok"],
    ["info", "skipped", "no Envoy", "drain step b: skipped (no Envoy)"],
    ["warn", "failed", "refused", "drain step c: failed"],
    ["warn", "failed", "at once", "drain step d: failed"],
  ]);
});

test("step runner › given a step that asked to be cut by a hurry and one that did not, when a hurry comes, then only the first is cut short", async (t) => {
  const { clock, lines, steps } = runner();
  const cut = steps.step("wait", never, 10_000, true);
  let uncutEnded = false;
  const uncut = steps.bounded(() => new Promise<string>((r) => clock.setTimeout(() => r("late"), 1000)), 5000).then((b) => ((uncutEnded = true), b));
  const plain = steps.step("plain", () => new Promise<void>((r) => clock.setTimeout(r, 2000)), 5000);
  await settle();
  steps.wakeAll();
  await cut;
  t.deepEqual(lines.map((l) => [l.fields.step, l.fields.outcome]), [["wait", "cut short"]]);
  t.false(uncutEnded, "a bounded call without cutByHurry goes on");
  await clock.advance(2000);
  await plain;
  t.deepEqual(await uncut, { outcome: "ok", value: "late" });
  t.deepEqual(lines.map((l) => [l.fields.step, l.fields.outcome]), [["wait", "cut short"], ["plain", "ok"]]);
});

test("step runner › given no bound (none, or Infinity), then no timer is set and the step ends when it ends", async (t) => {
  const { clock, timers, steps } = runner();
  const a = steps.bounded(() => new Promise<number>((r) => setImmediate(() => r(1))));
  const b = steps.bounded(() => new Promise<number>((r) => setImmediate(() => r(2))), Infinity);
  t.deepEqual(timers, []);
  await clock.advance(0);
  t.deepEqual([await a, await b], [{ outcome: "ok", value: 1 }, { outcome: "ok", value: 2 }]);
});

test("step runner › given the controller gave up, when a step ends, then nothing is logged", async (t) => {
  const { lines, steps } = runner(() => true);
  await steps.step("late", async () => {}, 100);
  t.deepEqual(lines, []);
});

test("step runner › sleeps end when their time passes; one that a hurry may cut ends at the hurry, and forever only then", async (t) => {
  const { clock, steps, timers } = runner();
  let slept = false;
  void steps.sleep(300).then(() => (slept = true));
  await clock.advance(299);
  t.false(slept);
  await clock.advance(1);
  t.true(slept);
  let woke = 0;
  void steps.sleepUnlessHurried(1000).then(() => woke++);
  void steps.sleepUnlessHurried(Infinity).then(() => woke++);
  await clock.advance(1000);
  t.is(woke, 1, "the timed one");
  t.deepEqual(timers, [300, 1000], "no timer for forever (Node would fire an Infinity timer at once)");
  steps.wakeAll();
  await settle();
  t.is(woke, 2, "forever, until the hurry");
});

test("step runner › a skipped step's result is told apart from any other value", (t) => {
  t.true(isSkipped(skipped("no Envoy")));
  for (const v of [undefined, null, {}, { skipped: 1 }, "skipped"]) t.false(isSkipped(v), JSON.stringify(v) ?? "undefined");
});

test("step runner › given a bounded step and a sleep, when a hurry ends them early, then neither leaves its timer behind", async (t) => {
  const { pending, steps } = runner();
  const step = steps.step("wait", never, 10_000, true);
  const sleep = steps.sleepUnlessHurried(20_000);
  t.is(pending.size, 2);
  steps.wakeAll();
  await Promise.all([step, sleep]);
  t.is(pending.size, 0);
});
