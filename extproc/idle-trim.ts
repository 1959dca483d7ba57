// Gives back V8's young generation when the sidecar goes quiet: it grows (to 2 × 4 MiB with the shipped
// --max-semi-space-size=4) during start-up, a policy load or traffic, and V8 shrinks it only at a collection
// that finds the allocation rate low, which an idle process may not trigger for a long time. IdleTrimPolicy is the
// decision, startIdleTrim the timer and the collection (needs Node started with --expose-gc, as the shipped
// NODE_OPTIONS do).
import { getHeapSpaceStatistics } from "node:v8";
import { Counter, type Registry } from "prom-client";
import type { Logger } from "./log.js";

export const IDLE_TRIM = {
  /** How often the process is looked at. */
  checkEveryMs: 5000,
  /**
   * At most this much CPU (all the process's threads) since the previous check counts as quiet: 1 % of a core. An
   * idle sidecar uses about 0.1 %, a Prometheus scrape a few ms; serving requests or loading a policy set far more.
   */
  quietMaxCpuMicros: 50_000,
  /**
   * Quiet checks in a row before a trim: 5–10 s without activity. V8 gives the young generation back at a
   * collection only once its own measure of the allocation rate, over about the last 5 s, is low
   * (Heap::ReduceNewSpaceSize).
   */
  quietChecks: 2,
  /** A young generation committing more than this has grown (V8 starts it, and shrinks it back, to 1 MiB). */
  grownAboveBytes: 2 * 1024 * 1024,
} as const;

/** What one check reads. */
export interface ProcessSample {
  /** CPU the process has used so far, all threads (process.cpuUsage() user + system), µs. */
  cpuMicros: number;
  /** Bytes committed to V8's young generation (new_space space_size). */
  youngCommittedBytes: number;
  /**
   * How many units of work (policy sets applied) the process has done so far. One since the previous check means
   * busy whatever the CPU says: an edit every second costs a sidecar a few ms, under the CPU limit, and a full
   * collection in the middle of such a stream would land in an edit's write → in force.
   */
  workDone?: number;
}

/**
 * PURE: given one reading per check, says when to collect. One trim per quiet spell: a trim after which V8 kept
 * the space is not retried until the process has been busy and gone quiet again.
 */
export class IdleTrimPolicy {
  private lastCpuMicros: number | undefined;
  private lastWorkDone = 0;
  private quietChecks = 0;
  private armed = true;

  constructor(private readonly limits: typeof IDLE_TRIM = IDLE_TRIM) {}

  /** One check: true when the young generation has grown and the process has been quiet long enough. */
  check(sample: ProcessSample): boolean {
    const last = this.lastCpuMicros;
    const lastWorkDone = this.lastWorkDone;
    this.lastCpuMicros = sample.cpuMicros;
    this.lastWorkDone = sample.workDone ?? 0;
    const quiet = last !== undefined && sample.cpuMicros - last <= this.limits.quietMaxCpuMicros && this.lastWorkDone === lastWorkDone;
    if (!quiet) {
      this.quietChecks = 0;
      this.armed = true;
      return false;
    }
    this.quietChecks++;
    return this.armed && this.quietChecks >= this.limits.quietChecks && sample.youngCommittedBytes > this.limits.grownAboveBytes;
  }

  /** After the collection a `true` from check() asked for: `after` is the reading it left (its CPU not counted as activity). */
  trimmed(after: ProcessSample): void {
    this.lastCpuMicros = after.cpuMicros;
    this.lastWorkDone = after.workDone ?? 0;
    this.armed = false;
  }
}

export function readProcessSample(): ProcessSample {
  const cpu = process.cpuUsage();
  const young = getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  return { cpuMicros: cpu.user + cpu.system, youngCommittedBytes: young?.space_size ?? 0 };
}

type Collect = (options: { type: "major" }) => void;

export interface IdleTrimOptions {
  registry: Registry;
  log: Logger;
  /** The collection to run. @default globalThis.gc (present when Node runs with --expose-gc) */
  collect?: Collect;
  /** The reading at each check; a caller that counts its work adds `workDone` to readProcessSample's. @default readProcessSample */
  read?: () => ProcessSample;
  /** @default IDLE_TRIM.checkEveryMs */
  checkEveryMs?: number;
}

export interface IdleTrim {
  /** false when there is no collection to run (Node started without --expose-gc). */
  readonly active: boolean;
  stop(): void;
}

/**
 * Checks every `checkEveryMs` (an unref'd timer) and, when the policy says so, runs one full collection: the one
 * V8's memory reducer would run some time later (it also waits for a quiet process, 8 s after the last full
 * collection, and postpones by 8 s when it finds none), which also returns what the old generation freed. On a
 * quiet sidecar it pauses the event loop for a few ms.
 */
export function startIdleTrim(options: IdleTrimOptions): IdleTrim {
  const trims = new Counter({
    name: "meshext_young_generation_trims_total",
    help: "Collections run when the sidecar went quiet, by whether V8 gave the young generation's space back",
    labelNames: ["result"],
    registers: [options.registry],
  });
  const collect = options.collect ?? (globalThis as { gc?: Collect }).gc;
  if (typeof collect !== "function") {
    options.log.info("young-generation trim off: Node runs without --expose-gc (the shipped NODE_OPTIONS include it), so V8 keeps its young generation at the size it grew to until its memory reducer runs");
    return { active: false, stop() {} };
  }
  const read = options.read ?? readProcessSample;
  const policy = new IdleTrimPolicy();
  policy.check(read()); // the reading the first check compares with
  const timer = setInterval(() => {
    const before = read();
    if (!policy.check(before)) return;
    collect({ type: "major" });
    const after = read();
    policy.trimmed(after);
    const result = after.youngCommittedBytes < before.youngCommittedBytes ? "shrunk" : "kept";
    trims.inc({ result });
    options.log.debug({ result, youngBytesBefore: before.youngCommittedBytes, youngBytesAfter: after.youngCommittedBytes }, "young generation trimmed");
  }, options.checkEveryMs ?? IDLE_TRIM.checkEveryMs);
  timer.unref();
  return { active: true, stop: () => clearInterval(timer) };
}
