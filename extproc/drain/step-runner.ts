// The timing half of the drain: runs each step bounded by a timeout (and, before the wait, by a
// "hurry"), logs its outcome, and sleeps in a way a hurry can cut short. Pure: clock injected.
import { isSkipped, type DrainClock, type DrainLog, type Skipped } from "./types.js";

export type StepOutcome = "ok" | "failed" | "timeout" | "cut short";

export interface Bounded<T> {
  outcome: StepOutcome;
  value?: T;
  error?: unknown;
}

export class StepRunner {
  private readonly hurryWaiters = new Set<() => void>();

  constructor(
    private readonly clock: DrainClock,
    private readonly log: DrainLog,
    /** True once the controller gave up (forced): results are dropped, nothing is logged. */
    private readonly isDone: () => boolean,
    /** ms since the drain started, for the log lines. */
    private readonly elapsedMs: () => number | null,
  ) {}

  /** Wakes every sleep and every step waiting with cutByHurry. */
  wakeAll(): void {
    for (const wake of this.hurryWaiters) wake();
    this.hurryWaiters.clear();
  }

  async step(name: string, fn: () => Promise<void | Skipped>, timeoutMs?: number, cutByHurry = false): Promise<void> {
    const t0 = this.clock.now();
    const r = await this.bounded(fn, timeoutMs, cutByHurry);
    if (this.isDone()) return;
    const fields: Record<string, unknown> = { step: name, outcome: r.outcome, ms: this.clock.now() - t0, afterMs: this.elapsedMs() };
    if (r.error !== undefined) fields.err = r.error instanceof Error ? r.error.message : String(r.error);
    if (r.outcome === "ok" && isSkipped(r.value)) this.log.info({ ...fields, outcome: "skipped", reason: r.value.skipped }, `drain step ${name}: skipped (${r.value.skipped})`);
    else if (r.outcome === "ok") this.log.info(fields, `drain step ${name}: ok`);
    else this.log.warn(fields, `drain step ${name}: ${r.outcome}`);
  }

  /** Runs fn, giving up after timeoutMs (if given) or on hurry (if asked); never throws. */
  bounded<T>(fn: () => Promise<T>, timeoutMs?: number, cutByHurry = false): Promise<Bounded<T>> {
    return new Promise((resolve) => {
      let settled = false;
      let timer: unknown;
      const finish = (r: Bounded<T>) => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) this.clock.clearTimeout(timer);
        this.hurryWaiters.delete(onHurry);
        resolve(r);
      };
      const onHurry = () => finish({ outcome: "cut short" });
      if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) timer = this.clock.setTimeout(() => finish({ outcome: "timeout" }), timeoutMs);
      if (cutByHurry) this.hurryWaiters.add(onHurry);
      let p: Promise<T>;
      try {
        p = Promise.resolve(fn());
      } catch (error) {
        finish({ outcome: "failed", error });
        return;
      }
      p.then(
        (value) => finish({ outcome: "ok", value }),
        (error: unknown) => finish({ outcome: "failed", error }),
      );
    });
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.clock.setTimeout(resolve, ms));
  }

  /** Sleeps ms (forever when ms is Infinity) unless a hurry wakes it first. */
  sleepUnlessHurried(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: unknown;
      const wake = () => {
        if (timer !== undefined) this.clock.clearTimeout(timer);
        this.hurryWaiters.delete(wake);
        resolve();
      };
      if (Number.isFinite(ms)) timer = this.clock.setTimeout(wake, ms);
      this.hurryWaiters.add(wake);
    });
  }
}
