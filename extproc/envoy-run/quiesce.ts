// Before meshext run stops its Envoy: no new inbound connection, and no inbound request in flight if they end
// soon. Envoy 1.40.0 can crash (SIGSEGV) in its worker teardown when it shuts down while ext_proc streams are
// open (docs/envoy-fidelity.md, "Stopping Envoy"); after the drain, the requests still arriving are the ones
// that keep them open. Best effort: an admin failure or a request that outlasts the budget only ends the wait.

/** The Envoy admin calls the quiesce needs (drain/envoy-admin.ts's EnvoyAdminClient fits). */
export interface QuiesceAdmin {
  stopInboundListeners(): Promise<void>;
  downstreamRequestsActive(statPrefix: string): Promise<number | undefined>;
}

/** The longest the stop of Envoy waits for its inbound requests, ms (a native sidecar exits within 1 s of SIGTERM). */
export const QUIESCE_BUDGET_MS = 400;
const POLL_MS = 20;

export interface QuiesceResult {
  /** Inbound requests in flight when the wait ended (undefined: not known). */
  inflight: number | undefined;
  waitedMs: number;
}

export async function quiesceEnvoy(admin: QuiesceAdmin, statPrefix: string, budgetMs = QUIESCE_BUDGET_MS): Promise<QuiesceResult> {
  const startMs = Date.now();
  let inflight: number | undefined;
  try {
    await admin.stopInboundListeners();
    for (;;) {
      inflight = await admin.downstreamRequestsActive(statPrefix);
      if (inflight === undefined || inflight === 0 || Date.now() - startMs >= budgetMs) break;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } catch {
    // Envoy's admin does not answer: stop it all the same.
  }
  return { inflight, waitedMs: Date.now() - startMs };
}
