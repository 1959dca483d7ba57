// PURE drain decisions: given the drain state and request facts, what to do with a response or a
// health request. Imports no ABI module, so it is the same logic whatever host runs it.

/** What this VM believes. Times are Unix ms; 0 means unknown. */
export class DrainState {
  constructor(
    public draining: bool = false,
    public sinceMs: i64 = 0,
    public deadlineMs: i64 = 0,
    /** When the poll that produced this state was issued; orders writes from different VMs. */
    public polledAtMs: i64 = 0,
  ) {}

  equals(other: DrainState): bool {
    return this.draining == other.draining && this.sinceMs == other.sinceMs && this.deadlineMs == other.deadlineMs;
  }
}

/** The state in force: a forced (configured) drain wins; its start is when the config took effect. */
export function effectiveState(polled: DrainState, forced: bool, forcedSinceMs: i64): DrainState {
  if (polled.draining || !forced) return polled;
  return new DrainState(true, forcedSinceMs, 0, polled.polledAtMs);
}

/**
 * Share of responses that get `Connection: close`, in [0, 1]. Without a ramp it is 1 from the start
 * of the drain; with one it grows linearly from 0 at `sinceMs` to 1 at `sinceMs + rampMs`, so that
 * keep-alive clients reconnect over the ramp instead of all at once.
 */
export function closeShare(state: DrainState, nowMs: i64, rampMs: i64): f64 {
  if (!state.draining) return 0;
  if (rampMs <= 0 || state.sinceMs <= 0) return 1;
  const elapsedMs = nowMs - state.sinceMs;
  if (elapsedMs <= 0) return 0;
  if (elapsedMs >= rampMs) return 1;
  return <f64>elapsedMs / <f64>rampMs;
}

/**
 * Deterministic spreading of a share over successive responses (error diffusion): every response
 * adds `share` to a credit, and closes when the credit reaches 1. Exact over any window, no RNG
 * (Math.random would import env.seed, which Envoy does not link).
 */
export class CloseRamp {
  credit: f64 = 0;

  shouldClose(share: f64): bool {
    if (share >= 1) { this.credit = 0; return true; }
    if (share <= 0) { this.credit = 0; return false; }
    this.credit += share;
    if (this.credit >= 1 - 1e-9) {
      this.credit -= 1;
      return true;
    }
    return false;
  }
}

/** `Connection: close` means something only on HTTP/1.x (the `request.protocol` property: `length` UTF-8 bytes at `at`). */
export function isHttp1(at: usize, length: i32): bool {
  if (length < 7) return false;
  // One 8-byte load, masked to 7 bytes (host results sit in 16-byte-aligned blocks, so the 8th byte is readable).
  return (load<u64>(at) & 0x00ffffffffffffff) == 0x002e312f50545448; // "HTTP/1."
}

export const enum HealthAction { PassThrough, AnswerServing, RefuseDraining }

export function healthAction(draining: bool, answerWhenServing: bool): HealthAction {
  if (draining) return HealthAction.RefuseDraining;
  return answerWhenServing ? HealthAction.AnswerServing : HealthAction.PassThrough;
}

/** Does a request `:path` (`pathLength` UTF-8 bytes at `path`; query ignored) address the health path exactly? */
export function isHealthPath(path: usize, pathLength: i32, healthPath: ArrayBuffer): bool {
  const length = healthPath.byteLength;
  if (pathLength < length) return false;
  if (memory.compare(path, changetype<usize>(healthPath), <usize>length) != 0) return false;
  return pathLength == length || load<u8>(path + <usize>length) == 0x3f; // end, or '?'
}
