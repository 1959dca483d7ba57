// Gives back V8's young generation when the sidecar goes quiet: it grows (to 2 × 4 MiB with the shipped
// --max-semi-space-size=4) during start-up, a policy load or traffic, and V8 shrinks it only at a collection
// that finds the allocation rate low, which an idle process never triggers. IdleTrimPolicy is the decision,
// startIdleTrim the timer and the collection (needs Node started with --expose-gc, as the shipped NODE_OPTIONS do).
import { getHeapSpaceStatistics } from "node:v8";
import { Counter, type Registry } from "prom-client";
import type { Logger } from "./log.js";

export const IDLE_TRIM = {
  /** How often the young generation is looked at. */
  checkEveryMs: 5000,
  /**
   * At most this much allocated since the previous check counts as quiet (≤ 200 bytes/ms at one check per 5 s):
   * a Prometheus scrape stays under it. V8 shrinks the young generation at a collection only while its measured
   * allocation rate, over about the last 5 s, is under 1 000 bytes/ms (Heap::ReduceNewSpaceSize).
   */
  quietMaxAllocatedBytes: 1024 * 1024,
  /** A used size this much lower than at the last check is V8's accounting, not a collection. */
  accountingSlackBytes: 64 * 1024,
  /** Quiet checks in a row before a trim: more than V8's 5 s rate window. */
  quietChecks: 2,
  /** A young generation committing more than this has grown (V8 starts it, and shrinks it back, to 1 MiB). */
  grownAboveBytes: 2 * 1024 * 1024,
} as const;

export interface YoungGeneration {
  /** Bytes committed to the young generation (V8's new_space space_size). */
  committedBytes: number;
  /** Bytes of it in use: grows with every allocation, drops at each collection. */
  usedBytes: number;
}

/**
 * PURE: given one young-generation reading per check, says when to collect. One trim per quiet spell: a trim
 * after which V8 kept the space (its own rate window still saw the burst) is not retried until allocation
 * resumes and stops again.
 */
export class IdleTrimPolicy {
  private lastUsedBytes: number | undefined;
  private quietChecks = 0;
  private armed = true;

  constructor(private readonly limits: typeof IDLE_TRIM = IDLE_TRIM) {}

  /** One check: true when the young generation has grown and the process has been quiet long enough. */
  check(young: YoungGeneration): boolean {
    const last = this.lastUsedBytes;
    this.lastUsedBytes = young.usedBytes;
    // A collection in between empties the space, so how much was allocated is unknown: not quiet. The used size
    // also moves back by a few KiB without one (V8 accounts its allocation buffers lazily): that is quiet.
    const allocated = last === undefined ? Infinity : young.usedBytes - last;
    const quiet = allocated >= -this.limits.accountingSlackBytes && allocated <= this.limits.quietMaxAllocatedBytes;
    if (!quiet) {
      this.quietChecks = 0;
      this.armed = true;
      return false;
    }
    this.quietChecks++;
    return this.armed && this.quietChecks >= this.limits.quietChecks && young.committedBytes > this.limits.grownAboveBytes;
  }

  /** After the collection a `true` from check() asked for: `after` is the reading it left. */
  trimmed(after: YoungGeneration): void {
    this.lastUsedBytes = after.usedBytes;
    this.armed = false;
  }
}

export function readYoungGeneration(): YoungGeneration {
  const space = getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  return { committedBytes: space?.space_size ?? 0, usedBytes: space?.space_used_size ?? 0 };
}

type Collect = (options: { type: "minor" }) => void;

export interface IdleTrimOptions {
  registry: Registry;
  log: Logger;
  /** The collection to run. @default globalThis.gc (present when Node runs with --expose-gc) */
  collect?: Collect;
  /** @default readYoungGeneration */
  read?: () => YoungGeneration;
  /** @default IDLE_TRIM.checkEveryMs */
  checkEveryMs?: number;
}

export interface IdleTrim {
  /** false when there is no collection to run (Node started without --expose-gc). */
  readonly active: boolean;
  stop(): void;
}

/** Checks every `checkEveryMs` (an unref'd timer) and runs a young-generation collection when the policy says so. */
export function startIdleTrim(options: IdleTrimOptions): IdleTrim {
  const trims = new Counter({
    name: "meshext_young_generation_trims_total",
    help: "Young-generation collections run when the sidecar went quiet, by whether V8 gave the space back",
    labelNames: ["result"],
    registers: [options.registry],
  });
  const collect = options.collect ?? (globalThis as { gc?: Collect }).gc;
  if (typeof collect !== "function") {
    options.log.info("young-generation trim off: Node runs without --expose-gc (the shipped NODE_OPTIONS include it), so V8 keeps its young generation at the size it grew to until its memory reducer runs");
    return { active: false, stop() {} };
  }
  const read = options.read ?? readYoungGeneration;
  const policy = new IdleTrimPolicy();
  policy.check(read()); // the reading the first check compares with
  const timer = setInterval(() => {
    if (!policy.check(read())) return;
    const before = read();
    collect({ type: "minor" });
    const after = read();
    policy.trimmed(after);
    const result = after.committedBytes < before.committedBytes ? "shrunk" : "kept";
    trims.inc({ result });
    options.log.debug({ result, committedBytesBefore: before.committedBytes, committedBytesAfter: after.committedBytes }, "young generation trimmed");
  }, options.checkEveryMs ?? IDLE_TRIM.checkEveryMs);
  timer.unref();
  return { active: true, stop: () => clearInterval(timer) };
}
