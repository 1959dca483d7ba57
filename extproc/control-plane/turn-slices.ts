// Work spread over turns of the event loop: at most TURN_SLICE callbacks per turn, so that a burst (a thousand
// long-polls woken, timed out or arriving at once) never holds a heartbeat or an unrelated GET behind it.

/**
 * Callbacks run per turn of the event loop. Each is cheap (a held request taken in, or answered with shared
 * bytes), but a thousand in one turn would still hold everything else that turn for tens of milliseconds.
 */
export const TURN_SLICE = 10;

/** A FIFO of callbacks run TURN_SLICE per turn (in setImmediate), I/O that arrives meanwhile going between slices. */
export class TurnSlices {
  private queue: Array<(() => void) | undefined> = [];
  private head = 0;
  private scheduled = false;

  constructor(private readonly perTurn = TURN_SLICE) {}

  /** Runs `fn` in a later turn, after every callback queued before it. */
  run(fn: () => void): void {
    this.queue.push(fn);
    this.schedule();
  }

  /** Resolves in a later turn, in its place in the queue (to take a request in without holding this turn). */
  next(): Promise<void> {
    return new Promise((resolve) => this.run(resolve));
  }

  /** Callbacks queued and not yet run. */
  get pending(): number {
    return this.queue.length - this.head;
  }

  private schedule(): void {
    if (this.scheduled || this.pending === 0) return;
    this.scheduled = true;
    setImmediate(this.drain);
  }

  private readonly drain = (): void => {
    this.scheduled = false;
    const end = Math.min(this.head + this.perTurn, this.queue.length);
    const batch = this.queue.slice(this.head, end);
    this.head = end;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    }
    this.schedule(); // before running the batch: a callback that throws does not stall the rest
    for (const fn of batch) fn!();
  };
}
