// The DecisionSamples byte bound in process: eviction stops exactly at the bound, and a ring's own eviction lowers what it counts as held.
import test from "ava";
import { DecisionSamples } from "../../extproc/control-plane/decision-samples.js";

/** `n` lines of exactly `size` bytes each (ASCII), named `${prefix}0`…, padded with dots. */
const lines = (prefix: string, n: number, size: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`.padEnd(size, "."));

test("sample store › given a push past the byte bound, when dropping its oldest brings the held bytes exactly to the bound, then no more go", (t) => {
  const s = new DecisionSamples({ perDataplane: 10, maxBytes: 20 });

  s.add("default", "web-1", lines("a", 3, 10)); // 30 bytes: one record (10) too many

  t.deepEqual(s.lines("default", "web-1"), lines("a", 3, 10).slice(1));
  t.deepEqual([s.bytes, s.records, s.dropped.get("memory_limit")], [20, 2, 1]);
});

test("sample store › given a ring that dropped its oldest as ring_full, when the byte bound is then passed, then the holder of the most bytes now loses, not that ring", (t) => {
  const s = new DecisionSamples({ perDataplane: 2, maxBytes: 49 });
  s.add("default", "a", lines("a", 3, 10)); // a0 goes as ring_full: a holds 20 bytes

  s.add("default", "b", lines("b", 2, 15)); // 50 bytes held: b (30) holds more than a (20)

  t.deepEqual(s.lines("default", "a"), lines("a", 3, 10).slice(1));
  t.deepEqual(s.lines("default", "b"), lines("b", 2, 15).slice(1));
  t.deepEqual([s.bytes, s.dropped.get("ring_full"), s.dropped.get("memory_limit")], [35, 1, 1]);
});
