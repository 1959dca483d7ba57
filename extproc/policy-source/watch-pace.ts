// Pacing of the control-plane long-poll: a server that answers at once, again and again (304 without holding the
// request, or a new ETag every time), must not turn the watch loop into a busy one. Pure: rounds in, waits out.

/** A long-poll round answered faster than this was not held by the server. */
export const IMMEDIATE_ROUND_MS = 1000;
/** Pause after the second immediate round in a row; it doubles with each further one, up to MAX_WATCH_PACE_MS. */
export const FIRST_WATCH_PACE_MS = 100;
export const MAX_WATCH_PACE_MS = 5000;

export class WatchPace {
  private immediateRounds = 0;

  /**
   * How long to wait before the next round, ms (0: none): from the second immediate round in a row on,
   * FIRST_WATCH_PACE_MS doubling up to MAX_WATCH_PACE_MS. A round the server held, or a failure (which backs off
   * anyway), resets it.
   */
  after(roundMs: number, outcome: "changed" | "unchanged" | "failed"): number {
    if (outcome === "failed" || roundMs >= IMMEDIATE_ROUND_MS) {
      this.immediateRounds = 0;
      return 0;
    }
    this.immediateRounds++;
    if (this.immediateRounds < 2) return 0;
    return Math.min(MAX_WATCH_PACE_MS, FIRST_WATCH_PACE_MS * 2 ** (this.immediateRounds - 2));
  }
}
