// Waiting on readiness instead of sleeping: polls a check until it holds, and says what it last saw when it never does.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `read` until `holds(value)`; resolves with that value, or rejects naming `what` and the last value read. */
export async function pollUntil<T>(what: string, read: () => Promise<T> | T, holds: (value: T) => boolean, timeoutMs = 30_000, stepMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await read();
      lastError = undefined;
      if (holds(last)) return last;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) break;
    await sleep(stepMs);
  }
  const seen = lastError !== undefined ? `error ${String(lastError)}` : JSON.stringify(last instanceof Map ? Object.fromEntries(last) : last);
  throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}; last seen: ${seen}`);
}
