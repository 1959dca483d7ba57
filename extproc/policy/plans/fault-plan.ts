// A client's MeshFaultInjection list as compiled ahead of its requests: each element's texts parsed
// (decide/faults.ts compiles and samples it), and which policy rule each element came from.
import type { ConfSource } from "../model/types.js";

/** One element of an `http` list with its texts parsed: what sampling needs and nothing else. */
export interface CompiledFault {
  /** Present when the element has a delay: its duration (0 when unparsable) and percentage. */
  delay?: { ms: number; percent: number };
  /** Present when the element has an abort with a numeric status. */
  abort?: { httpStatus: number; percent: number };
}

/** A client's fault list compiled once; `sourceOf(element)` names the rule that contributed that element (none: the first). */
export interface FaultPlan {
  faults: readonly CompiledFault[];
  sourceOf: (element?: number) => ConfSource | undefined;
}
