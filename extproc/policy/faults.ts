// MeshFaultInjection `default.http` list → what happens to one request. Elements run in order, each
// element's delay then abort (as Envoy's fault filter), each percentage applied to the traffic that got
// through the previous elements (reference §4.2). `random` returns [0, 1) and is injected for tests.
import { parseGoDurationMs } from "./duration.js";
import { percentageValue } from "./validate-confs.js";

export interface FaultOutcome {
  delayMs: number;
  abort?: { httpStatus: number; element: number };
  /** Elements whose fault cannot be done by ext_proc (responseBandwidth). */
  unsupported: string[];
}

interface FaultElement {
  abort?: { httpStatus?: number; percentage?: unknown };
  delay?: { value?: string; percentage?: unknown };
  responseBandwidth?: { limit?: string; percentage?: unknown };
}

export function sampleFaults(http: unknown, random: () => number): FaultOutcome {
  const out: FaultOutcome = { delayMs: 0, unsupported: [] };
  if (!Array.isArray(http)) return out;
  http.forEach((raw, element) => {
    if (out.abort) return;
    const f = (raw ?? {}) as FaultElement;
    if (f.delay && hit(f.delay.percentage, random)) out.delayMs += parseGoDurationMs(f.delay.value) ?? 0;
    if (f.abort && typeof f.abort.httpStatus === "number" && hit(f.abort.percentage, random)) out.abort = { httpStatus: f.abort.httpStatus, element };
    if (f.responseBandwidth) out.unsupported.push(`http[${element}].responseBandwidth`);
  });
  return out;
}

/** True with probability percentage/100; 0 never and 100 always, whatever the random source says. */
export function hit(percentage: unknown, random: () => number): boolean {
  const p = percentageValue(percentage) ?? 0;
  if (p <= 0) return false;
  if (p >= 100) return true;
  return random() * 100 < p;
}
