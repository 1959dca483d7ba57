// A manual clock for the drain state machine: timers fire only when a test advances time, and
// pending promises settle between timers.
import type { DrainClock } from "../../extproc/drain/controller.js";

interface Timer {
  id: number;
  atMs: number;
  fn: () => void;
}

export class FakeClock implements DrainClock {
  nowMs = 1_000_000;
  private nextId = 1;
  private timers: Timer[] = [];

  now(): number {
    return this.nowMs;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const timer = { id: this.nextId++, atMs: this.nowMs + Math.max(0, ms), fn };
    this.timers.push(timer);
    return timer.id;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Moves time forward by ms, firing due timers in order and letting promises settle after each. */
  async advance(ms: number): Promise<void> {
    const endMs = this.nowMs + ms;
    for (;;) {
      await settle();
      const due = this.timers.filter((t) => t.atMs <= endMs).sort((a, b) => a.atMs - b.atMs || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.nowMs = Math.max(this.nowMs, due.atMs);
      due.fn();
    }
    this.nowMs = endMs;
    await settle();
  }
}

/** Lets every queued promise callback run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
