// Item 5: sidecar RSS idle (1 policy), with 10 000 policies loaded, and peak under the highest in-flight
// load, each against the echo server's RSS in the same state (from the throughput bench's processes); and the
// footprint goals on that largest set: peak RSS, requests/s and server CPU per request against the echo.
import type { BenchRow } from "./report.js";
import { isGrpcJsEcho, type ThroughputResult } from "./throughput.js";

export function memoryRows(t: ThroughputResult): BenchRow[] {
  const maxInFlight = Math.max(...t.cells.map((c) => c.inFlight));
  const peak = (policies: number | undefined) => t.cells.find((c) => c.policies === policies && !c.transportEcho && c.inFlight === maxInFlight)?.rssPeakMiB;
  const echoIdle = t.idleRssMiB["echo"];
  const echoPeak = peak(undefined);
  const sizes = t.cells.map((c) => c.policies).filter((p): p is number => p !== undefined);
  const smallest = Math.min(...sizes);
  const largest = Math.max(...sizes);
  const rows: BenchRow[] = [];
  const add = (name: string, value: number | undefined, baseline: number | undefined, goal?: string) => {
    if (value !== undefined) rows.push({ name, value, unit: "MiB RSS", baseline, ratio: baseline ? value / baseline : undefined, ...(goal ? { goal } : {}) });
  };
  add(`sidecar idle, ${smallest} polic${smallest === 1 ? "y" : "ies"} (vs idle echo)`, t.idleRssMiB[`sidecar, ${smallest} policies`], echoIdle);
  add(`sidecar idle, ${largest} policies (vs idle echo)`, t.idleRssMiB[`sidecar, ${largest} policies`], echoIdle);
  add(`sidecar peak under ${maxInFlight} in flight, ${largest} policies (vs echo)`, peak(largest), echoPeak, "ratio ≤ 1.3");
  const ours = t.cells.find((c) => c.policies === largest && c.inFlight === maxInFlight);
  const echo = t.cells.find((c) => isGrpcJsEcho(c) && c.inFlight === maxInFlight);
  if (ours && echo) {
    const what = `${maxInFlight} in flight, ${largest} policies`;
    rows.push({ name: `ext_proc req/s, ${what} (vs echo)`, value: ours.rps, unit: "req/s", baseline: echo.rps, ratio: ours.rps / echo.rps, goal: "ratio ≥ 0.9" });
    rows.push({ name: `ext_proc server CPU, ${what} (vs echo)`, value: ours.cpuUsPerReq, unit: "µs/req", baseline: echo.cpuUsPerReq, ratio: ours.cpuUsPerReq / echo.cpuUsPerReq, goal: "ratio ≤ 1.1" });
  }
  return rows;
}
