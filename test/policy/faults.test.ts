// faults › a compiled MeshFaultInjection list samples like Envoy's fault filter: each element's delay then its
// abort, in order, one random draw per percentage strictly between 0 and 100, nothing after the first abort.
import test from "ava";
import { compileFaults, sampleFaults } from "../../extproc/policy/decide/faults.js";

/** A random source that returns `values` in turn and records how many were drawn. */
function scripted(values: number[]): { random: () => number; draws: () => number } {
  let i = 0;
  return { random: () => values[i++ % values.length]!, draws: () => i };
}

test("faults › delays add up in order and the first abort stops the list", (t) => {
  // given a delay at 50%, an abort at 50% and one more delay after it
  const faults = compileFaults([
    { delay: { value: "10ms", percentage: 50 }, abort: { httpStatus: 503, percentage: "50" } },
    { delay: { value: "1s", percentage: 50 } },
  ]);
  // when the draws are delay hit (0.1), abort hit (0.2)
  const r = scripted([0.1, 0.2, 0.3]);
  const out = sampleFaults(faults, r.random);
  // then the delay counts, the abort names element 0, and the second element is never drawn
  t.deepEqual(out, { delayMs: 10, abort: { httpStatus: 503, element: 0 } });
  t.is(r.draws(), 2);
});

test("faults › 0% and 100% decide without a draw; an unparsable percentage never hits", (t) => {
  // given one element at 100% delay and 0% abort, then one with a percentage that is not a number
  const faults = compileFaults([{ delay: { value: "5ms", percentage: 100 }, abort: { httpStatus: 500, percentage: 0 } }, { abort: { httpStatus: 500, percentage: "x" } }]);
  // when sampled
  const r = scripted([0]);
  const out = sampleFaults(faults, r.random);
  // then the delay applies, nothing aborts, and no random number was used
  t.deepEqual(out, { delayMs: 5 });
  t.is(r.draws(), 0);
});

test("faults › a compiled list is drawn afresh on every sample", (t) => {
  // given a 50% delay compiled once
  const faults = compileFaults([{ delay: { value: "2ms", percentage: 50 } }]);
  // when sampled with a miss, a hit, a miss
  const r = scripted([0.9, 0.1, 0.7]);
  const delays = [1, 2, 3].map(() => sampleFaults(faults, r.random).delayMs);
  // then only the second request is delayed
  t.deepEqual(delays, [0, 2, 0]);
});

test("faults › anything but a list is no faults; an abort without a numeric status is none", (t) => {
  t.deepEqual(compileFaults(undefined), []);
  t.deepEqual(sampleFaults(compileFaults([{ abort: { httpStatus: "503", percentage: 100 } }]), () => 0), { delayMs: 0 });
});
