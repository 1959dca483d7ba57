// Pacing of the control-plane long-poll: a server that answers at once, again and again (304 without holding the
// request, or a new ETag every time), must not turn the watch loop into a busy one. Pure: rounds in, waits out.

/**
 * A long-poll round answered faster than this was not held by the server. Short on purpose: a real change comes
 * at any moment of the hold, and edits a second apart must each go through at once (a 1 s limit paced them to 5 s).
 */
export const IMMEDIATE_ROUND_MS = 100;
/** Pause after the second immediate round in a row; it doubles with each further one, up to the caps below. */
export const FIRST_WATCH_PACE_MS = 100;
/** Cap for rounds answered 304 at once: nothing changed, so nothing is delayed by waiting. */
export const MAX_WATCH_PACE_MS = 5000;
/** Cap for rounds answered with a change at once: a burst of writes is read at most this late. */
export const MAX_CHANGED_PACE_MS = 1000;

export class WatchPace {
  private immediateRounds = 0;

  /**
   * How long to wait before the next round, ms (0: none): from the second immediate round in a row on,
   * FIRST_WATCH_PACE_MS doubling up to MAX_WATCH_PACE_MS (MAX_CHANGED_PACE_MS when this round brought a change).
   * A round the server held, or a failure (which backs off anyway), resets it.
   */
  after(roundMs: number, outcome: "changed" | "unchanged" | "failed"): number {
    if (outcome === "failed" || roundMs >= IMMEDIATE_ROUND_MS) {
      this.immediateRounds = 0;
      return 0;
    }
    this.immediateRounds++;
    if (this.immediateRounds < 2) return 0;
    const cap = outcome === "changed" ? MAX_CHANGED_PACE_MS : MAX_WATCH_PACE_MS;
    return Math.min(cap, FIRST_WATCH_PACE_MS * 2 ** Math.min(16, this.immediateRounds - 2));
  }
}
