// Waits until an Envoy we started is LIVE: its admin's /ready answers 200 (Envoy's server state LIVE), or it exits.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** true once `adminUrl`/ready answers 200; false if `exited` settles first or `timeoutMs` passes. */
export async function untilEnvoyLive(adminUrl: string, exited: Promise<unknown>, timeoutMs: number, stepMs = 50): Promise<boolean> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + timeoutMs;
  while (!gone && Date.now() < deadline) {
    try {
      const res = await fetch(`${adminUrl}/ready`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) return true;
    } catch {
      // not listening yet
    }
    await sleep(stepMs);
  }
  return false;
}
