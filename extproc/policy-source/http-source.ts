// Policy source backed by a control plane's REST API (the embedded one, or Kuma's): full list sync of every
// supported kind, then long-poll when the server offers ETags or jittered polling when it does not (Kuma).
// Failures back off and keep the last good set; 401/403 stop the source; a cache file covers cold starts.
import type { Resource } from "../kuma-rest/resources.js";
import type { Logger } from "../log.js";
import type { Policy } from "../policy/documents/parse.js";
import { Backoff, withJitter } from "./backoff.js";
import { readPolicyCache, writePolicyCache } from "./cache-file.js";
import { allowListeners, ROUND_OVER } from "./http-get.js";
import { KumaClient, SyncError, syncBudget } from "./kuma-client.js";
import { POLICY_SET_WATCH, PolicySetReader } from "./http-policy-set.js";
import { kindAndName } from "./last-good.js";
import { FetchedSet } from "./fetched-set.js";
import { reportRejected } from "./http-rejected.js";
import { PolicySourceMetrics } from "./metrics.js";
import { FETCHED_TYPES, isOptionalType, validateFetched } from "./resource-set.js";
import type { MeshResources } from "../policy/documents/resources.js";
import type { PolicySource, RejectedPolicy } from "./source.js";
import type { HttpPolicySourceOptions, SyncStatus } from "./http-source-options.js";
import { WatchPace } from "./watch-pace.js";
import { SyncHealth } from "./sync-health.js";

export type { HttpPolicySourceOptions, SyncStatus } from "./http-source-options.js";
export { FIRST_WATCH_PACE_MS, IMMEDIATE_ROUND_MS, MAX_CHANGED_PACE_MS, MAX_WATCH_PACE_MS } from "./watch-pace.js";

export function createHttpPolicySource(opts: HttpPolicySourceOptions): HttpPolicySource {
  return new HttpPolicySource(opts);
}

export class HttpPolicySource implements PolicySource {
  readonly status: SyncStatus = { halted: false, mode: "poll" };
  rejected: RejectedPolicy[] = [];
  private readonly client: KumaClient;
  /** The control plane's set for this dataplane, when it serves one (the embedded control plane). */
  private readonly sets: PolicySetReader | undefined;
  /** While that set is offered but not usable yet (not registered), full-list rounds are this short (doubling). */
  private probeWaitMs = 1000;
  private readonly metrics: PolicySourceMetrics;
  private readonly health: SyncHealth;
  private readonly log: Logger;
  private readonly origin: string;
  private loadedValue = false;
  /** The items in force (by kind/name, for keeping last good versions), their fingerprint and validation memo. */
  readonly held: FetchedSet;
  private stopped = false;
  private longPollSupported = true;
  /** Aborted by stop(): every request of the source ends (each sync's and round's signal follows it). */
  private inflight = new AbortController();
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(private readonly opts: HttpPolicySourceOptions) {
    this.client = new KumaClient({ baseUrl: opts.baseUrl, token: opts.token, mesh: opts.mesh, requestTimeoutMs: opts.requestTimeoutMs, maxListBytes: opts.maxListBytes });
    const { baseUrl, mesh, requestTimeoutMs, dataplane, registered, log } = opts;
    this.sets = dataplane ? new PolicySetReader(this.client, { baseUrl, mesh, requestTimeoutMs, dataplane, registered, log, kumaVersion: opts.kumaVersion }) : undefined;
    this.metrics = new PolicySourceMetrics(opts.registry);
    this.log = opts.log.child({ component: "policy-source", controlPlane: opts.baseUrl, mesh: opts.mesh });
    this.health = new SyncHealth(this.status, this.metrics, opts.backoff ?? new Backoff(), this.log);
    this.origin = `control-plane:${opts.baseUrl}/meshes/${opts.mesh}`;
    this.held = new FetchedSet(opts.mesh);
  }

  get loaded(): boolean {
    return this.loadedValue;
  }

  /** First sync (or, if the control plane cannot be read, the cache file), then keeps following in the background. */
  async start(): Promise<void> {
    let etags = await this.syncOnce();
    if (etags === undefined) await this.loadCache();
    this.loop = this.run(etags);
  }

  /** Lists everything again and applies it even if unchanged; the follow loop carries on as before. */
  async resync(): Promise<void> {
    this.held.forget();
    await this.syncOnce();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.inflight.abort();
    this.wake?.();
    await this.loop;
  }

  private async run(initialEtags: Map<string, string> | null | undefined): Promise<void> {
    let etags = initialEtags;
    if (etags === undefined && !this.status.halted) await this.sleep(this.health.retryDelay());
    while (!this.stopped && !this.status.halted) {
      if (etags === undefined) {
        etags = await this.syncOnce();
        if (etags === undefined) {
          await this.sleep(this.health.retryDelay());
          continue;
        }
      }
      if (etags === null) {
        await this.sleep(withJitter(this.opts.pollIntervalMs));
        etags = undefined;
        continue;
      }
      const roundStartedMs = Date.now();
      const outcome = await this.watch(etags);
      await this.pace(Date.now() - roundStartedMs, outcome);
      if (outcome === "unchanged" && this.sets?.pending && !etags.has(POLICY_SET_WATCH)) etags = (await this.readSet().catch(() => undefined)) ?? etags;
      if (outcome === "unchanged") continue;
      const applied = this.watchedSet;
      this.watchedSet = undefined;
      if (outcome === "changed" && applied) {
        etags = applied; // the long-poll's answer was the new set, applied already
        continue;
      }
      etags = undefined; // changed, unsupported or failed: list everything again
      if (outcome === "failed") await this.sleep(this.health.retryDelay());
    }
  }

  private readonly watchPace = new WatchPace();

  /** Waits as WatchPace says after a long-poll round, counting each wait. */
  private async pace(roundMs: number, outcome: "changed" | "unchanged" | "failed"): Promise<void> {
    const waitMs = this.watchPace.after(roundMs, outcome);
    if (waitMs === 0) return;
    this.metrics.watchPaced.inc();
    await this.sleep(waitMs);
  }

  /**
   * Lists every kind and applies the set if it changed. Returns the ETags to long-poll on, null when
   * the server offers none (plain polling), undefined when the sync failed.
   */
  private async syncOnce(): Promise<Map<string, string> | null | undefined> {
    this.metrics.attempts.inc();
    // The sync's own signal: once one list failed the sync has, and the other lists' requests end with it (else
    // each retry would add its lists to the requests a failed sync left running, up to their timeout).
    const sync = new AbortController();
    const signal = allowListeners(AbortSignal.any([sync.signal, this.inflight.signal]), FETCHED_TYPES.length + 1);
    try {
      // One byte and page budget for the whole sync: the lists are read in parallel, so a budget per list
      // would let one sync hold every kind's limit at once.
      const set = await this.readSet();
      if (set) return set;
      const budget = syncBudget(this.opts.maxListBytes);
      const read = FETCHED_TYPES.map(async (t) => ({ type: t, list: await this.client.listAll(t, signal, isOptionalType(t), budget) }));
      const lists = (await Promise.all(read)).filter((l) => !l.list.missing);
      this.applyIfChanged(lists.flatMap((l) => l.list.items));
      this.health.success();
      const etags = new Map(lists.filter((l) => l.list.etag).map((l) => [l.type.plural, l.list.etag!]));
      const canWatch = this.longPollSupported && etags.size === lists.length;
      this.status.mode = canWatch ? "long-poll" : "poll";
      return canWatch ? etags : null;
    } catch (err) {
      sync.abort();
      this.recordFailure(err);
      return undefined;
    }
  }

  /** This dataplane's own set, applied; its ETag to long-poll on, undefined when the full lists must be read. */
  private async readSet(): Promise<Map<string, string> | undefined> {
    const set = await this.sets?.read(this.inflight.signal, syncBudget(this.opts.maxListBytes));
    return set ? this.applySet(set) : undefined;
  }

  /** Applies this dataplane's set as read or as a long-poll brought it; its ETag, to long-poll on next. */
  private applySet(set: { items: Resource[]; etag: string }): Map<string, string> {
    this.applyIfChanged(set.items);
    this.health.success();
    this.status.mode = "long-poll";
    return new Map([[POLICY_SET_WATCH, set.etag]]);
  }

  /** Holds one long-poll per kind (or one on this dataplane's set); the first change (or failure) cancels the others. */
  private async watch(etags: Map<string, string>): Promise<"changed" | "unchanged" | "failed"> {
    this.metrics.attempts.inc();
    let waitMs = this.opts.longPollWaitMs ?? 30_000;
    if (this.sets?.pending && !etags.has(POLICY_SET_WATCH)) waitMs = Math.min(waitMs, (this.probeWaitMs *= 2) / 2);
    const set = etags.get(POLICY_SET_WATCH);
    // One long-poll (this dataplane's set) has no others to end: it waits on the source's own signal, and the
    // round is over once it failed, as a round's controller would say; several share a round controller.
    const round = set ? undefined : new AbortController();
    let roundOver = false;
    // Any list answering with the ETag it was asked about: that answer ends the round (the others are cut), so it is
    // noted as it comes, not read from the round's results.
    let unsupported = false;
    const endRound = () => ((roundOver = true), round?.abort(ROUND_OVER));
    const signal = round ? allowListeners(AbortSignal.any([round.signal, this.inflight.signal]), FETCHED_TYPES.length + 1) : this.inflight.signal;
    const waits = set ? [() => this.waitForSet(set, waitMs, signal)] : FETCHED_TYPES.filter((t) => etags.has(t.plural)).map((t) => () => this.client.waitForChange(t, etags.get(t.plural)!, waitMs, signal));
    try {
      const results = await Promise.all(
        waits.map(async (waitForChange) => {
          const r = await waitForChange();
          if (r === "unsupported") unsupported = true;
          if (r !== "unchanged" && waits.length > 1) endRound(); // the other long-polls end
          return r;
        }),
      ).catch((err: unknown) => {
        endRound();
        throw err;
      });
      if (results.every((r) => r === "unchanged")) {
        // The control plane held every long-poll and confirmed the set is current: that is a successful sync.
        this.health.success();
        return "unchanged";
      }
      return "changed";
    } catch (err) {
      if (roundOver && !this.inflight.signal.aborted && !(err instanceof SyncError)) return "changed";
      if (this.stopped) return "failed";
      this.recordFailure(err);
      return "failed";
    } finally {
      if (unsupported) {
        this.longPollSupported = false;
        this.log.warn("control plane sends ETags but ignores If-None-Match; falling back to polling");
      }
    }
  }

  /** The long-poll on this dataplane's set; a new set it brings is applied here, and its ETag kept for the next round. */
  private async waitForSet(etag: string, waitMs: number, signal: AbortSignal): Promise<"changed" | "unchanged" | "unsupported"> {
    const r = await this.sets!.waitForChange(etag, waitMs, signal, syncBudget(this.opts.maxListBytes));
    if (r.set) this.watchedSet = this.applySet(r.set);
    return r.outcome;
  }

  /** Set by waitForSet when a long-poll answer brought the new set: the next round watches it, no sync needed. */
  private watchedSet: Map<string, string> | undefined;

  /**
   * Validates every item and applies the set if the items changed. A rejected item keeps its last good
   * version in force, policy or resource (an unidentifiable one keeps every previous item), so a bad new
   * version of a Deny or of the Mesh never turns into an allow, and a list of nothing but invalid items never
   * empties the set; a rejected Mesh with no good version counts as mTLS on.
   */
  private applyIfChanged(all: Resource[]): void {
    const next = this.held.next(all, this.opts.kumaVersion, (item) => `${this.opts.baseUrl}/meshes/${item.mesh}/${item.type}/${item.name}`);
    if (!next) return;
    this.rejected = reportRejected(next.refused, next.keptKeys, `${this.opts.baseUrl}/meshes/${this.opts.mesh}`, this.log);
    this.commit(next.policies, this.origin, next.refused.length, next.resources);
    this.held.accept(next);
    if (this.opts.cacheFile) {
      writePolicyCache(this.opts.cacheFile, { savedAt: new Date().toISOString(), controlPlane: this.opts.baseUrl, mesh: this.opts.mesh, items: [...next.goodItems.values()] }).catch(
        (err: unknown) => this.log.warn({ err: (err as Error).message, cacheFile: this.opts.cacheFile }, "could not write the policy cache file"),
      );
    }
  }

  /** One atomic hand-over: `apply` swaps the whole set, so requests in flight finish on the old one. */
  private commit(policies: Policy[], origin: string, rejected: number, resources: MeshResources): void {
    this.opts.apply(policies, origin, resources);
    this.loadedValue = true;
    this.metrics.applied(policies, rejected);
    // Debug only: the engine's "policy set in force" line says it at info, and each rejected item has its warning.
    this.log.debug({ policies: policies.length, rejected, origin }, "policy set applied");
  }

  private async loadCache(): Promise<void> {
    if (!this.opts.cacheFile || this.loadedValue) return;
    try {
      const cache = await readPolicyCache(this.opts.cacheFile);
      if (!cache) return void this.log.warn({ cacheFile: this.opts.cacheFile }, "control plane unreachable and no policy cache yet");
      const { policies, resources, good, rejected } = validateFetched(cache.items as Resource[], this.opts.mesh, this.opts.kumaVersion);
      for (const item of good) this.held.inForceItems.set(kindAndName(item.type, item.name), item);
      this.commit(policies, `cache:${this.opts.cacheFile} (saved ${cache.savedAt})`, rejected.length, resources);
    } catch (err) {
      this.log.error({ err: (err as Error).message, cacheFile: this.opts.cacheFile }, "could not read the policy cache file");
    }
  }

  private recordFailure(err: unknown): void {
    if (!this.stopped) this.health.failure(err); // a stop aborts what is in flight: not a failure
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout((this.wake = () => (clearTimeout(timer), resolve())), ms);
    });
  }
}
