// Shared data glue: the drain state every worker VM agrees on, and the poll lease that makes one VM
// poll per period. Both are compare-and-swap writes through abi/host.ts.
import { getSharedData, setSharedData, sharedCas, sharedStatus } from "./abi/host";
import { LogLevel, Status } from "./abi/types";
import { emit, failedLine } from "./logging";
import { DrainState } from "./drain";
import { E_SHARED_WRITE } from "./errors";
import { decodeMs, decodeState, encodeMs, encodeState } from "./state-codec";

const STATE_KEY = "meshext_drain.state";
const POLL_DUE_KEY = "meshext_drain.poll_due_ms";
const CAS_ATTEMPTS = 4;

/** The state last stored by any VM, or null when none is stored (or it is unreadable). */
export function readSharedState(): DrainState | null {
  const value = getSharedData(STATE_KEY);
  return value !== null ? decodeState(value) : null;
}

/**
 * Store a freshly polled state unless a VM already stored one from a later poll. CAS makes the
 * read-compare-write atomic across VMs; a mismatch means another VM wrote in between: re-read, retry.
 */
export function storeSharedState(state: DrainState): void {
  const value = encodeState(state);
  for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
    const stored = getSharedData(STATE_KEY);
    if (stored !== null) {
      const storedState = decodeState(stored);
      if (storedState !== null && storedState.polledAtMs > state.polledAtMs) return;
    }
    const status = setSharedData(STATE_KEY, value, sharedCas);
    if (status == Status.Ok) return;
    if (status != Status.CasMismatch) {
      emit(LogLevel.Warn, failedLine(E_SHARED_WRITE, status));
      return;
    }
  }
}

/**
 * Claim this period's poll: true for exactly one VM per period when shared data works (the CAS
 * winner), true as well when shared data is unavailable (better every VM polls than none).
 * The lease is 3/4 of a period so tick jitter never skips a whole period.
 */
export function claimPoll(nowMs: i64, periodMs: u32): bool {
  const due = getSharedData(POLL_DUE_KEY);
  if (due !== null) {
    if (decodeMs(due) > nowMs) return false;
  } else if (sharedStatus != Status.NotFound) {
    return true;
  }
  const dueMs = nowMs + <i64>periodMs * 3 / 4;
  const status = setSharedData(POLL_DUE_KEY, encodeMs(dueMs), sharedCas);
  return status == Status.Ok || status != Status.CasMismatch;
}
