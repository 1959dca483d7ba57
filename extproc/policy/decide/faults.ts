// MeshFaultInjection `default.http` list → what happens to one request. Elements run in order, each
// element's delay then abort (as Envoy's fault filter), each percentage applied to the traffic that got
// through the previous elements (meshfaultinjection/api/v1alpha1 at v2.14.3). `random` returns [0, 1) and is
// injected for tests.
// A list is compiled once (durations and percentages parsed) and then only sampled per request.
import { parseGoDurationMs } from "../documents/duration.js";
import { percentageValue } from "../documents/validate-confs.js";
import type { CompiledFault } from "../plans/fault-plan.js";

export interface FaultOutcome {
  delayMs: number;
  abort?: { httpStatus: number; element: number };
}

interface FaultElement {
  abort?: { httpStatus?: number; percentage?: unknown };
  delay?: { value?: string; percentage?: unknown };
}

/** The `http` list compiled; anything but an array is no faults. */
export function compileFaults(http: unknown): CompiledFault[] {
  if (!Array.isArray(http)) return [];
  return http.map((raw) => {
    const f = (raw ?? {}) as FaultElement;
    const out: CompiledFault = {};
    if (f.delay) out.delay = { ms: parseGoDurationMs(f.delay.value) ?? 0, percent: percentValue(f.delay.percentage) };
    if (f.abort && typeof f.abort.httpStatus === "number") out.abort = { httpStatus: f.abort.httpStatus, percent: percentValue(f.abort.percentage) };
    return out;
  });
}

const NOTHING_SAMPLED: Readonly<FaultOutcome> = Object.freeze({ delayMs: 0 });

/** Draws each element's delay then abort in order, stopping at the first abort; nothing allocated when nothing hits. */
export function sampleFaults(faults: readonly CompiledFault[], random: () => number): Readonly<FaultOutcome> {
  let delayMs = 0;
  for (let element = 0; element < faults.length; element++) {
    const f = faults[element]!;
    if (f.delay && hitPercent(f.delay.percent, random)) delayMs += f.delay.ms;
    if (f.abort && hitPercent(f.abort.percent, random)) return { delayMs, abort: { httpStatus: f.abort.httpStatus, element } };
  }
  return delayMs === 0 ? NOTHING_SAMPLED : { delayMs };
}

function percentValue(percentage: unknown): number {
  return percentageValue(percentage) ?? 0;
}

/** True with probability p/100; 0 never and 100 always, whatever the random source says. */
function hitPercent(p: number, random: () => number): boolean {
  if (p <= 0) return false;
  if (p >= 100) return true;
  return random() * 100 < p;
}
