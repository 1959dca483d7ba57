// Dataplane lifecycle: PUT registers (online), heartbeats keep it online or mark it draining, missed
// heartbeats make it offline, DELETE removes it at once, and offline ones are garbage-collected after an age.
import { DATAPLANE_TYPE, type Resource } from "../kuma-rest/resources.js";
import type { Logger } from "../log.js";
import { notFound } from "./problems.js";
import type { ResourceStore } from "./store.js";

export type DataplaneState = "online" | "draining" | "offline";

export interface DataplaneStatus {
  state: DataplaneState;
  lastSeenTime: string;
}

export interface DataplaneLifecycleOptions {
  /** A dataplane not heard from for this long is offline. @default 30000 */
  offlineTimeoutMs: number;
  /** An offline dataplane last seen this long ago is deleted (Kuma's dataplaneCleanupAge). @default 72h */
  offlineGcAgeMs: number;
  now?: () => number;
}

export class DataplaneRegistry {
  /** Heartbeat times kept in memory only: persisting every heartbeat would be a disk write per dataplane per interval. */
  private readonly lastSeenMs = new Map<string, number>();
  private readonly bootMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: ResourceStore,
    private readonly opts: DataplaneLifecycleOptions,
    private readonly log: Logger,
  ) {
    this.now = opts.now ?? Date.now;
    this.bootMs = this.now();
  }

  /** PUT: stores the Dataplane as online (or draining when every inbound is `state: NotReady`, Kuma's way). */
  async register(mesh: string, name: string, doc: Record<string, unknown>): Promise<{ created: boolean; resource: Resource }> {
    const nowMs = this.now();
    const { status: _ignored, ...rest } = doc;
    const state: DataplaneState = allInboundsNotReady(rest) ? "draining" : "online";
    const result = await this.store.put(DATAPLANE_TYPE, { ...rest, type: DATAPLANE_TYPE.kind, mesh, name, status: statusAt(state, nowMs) });
    this.lastSeenMs.set(key(mesh, name), nowMs);
    return { created: result.created, resource: this.view(result.resource) };
  }

  /** POST _heartbeat: refreshes last-seen; a state change (online ↔ draining, or back from offline) is persisted. */
  async heartbeat(mesh: string, name: string, state: "online" | "draining" | undefined): Promise<Resource> {
    const stored = this.store.get(DATAPLANE_TYPE.kind, mesh, name);
    if (!stored) throw notFound(`dataplane ${mesh}/${name} is not registered (PUT it first)`);
    const nowMs = this.now();
    this.lastSeenMs.set(key(mesh, name), nowMs);
    // Most heartbeats change nothing persisted: with no write of this Dataplane queued, they are answered now
    // instead of waiting in the write queue behind other resources' durable writes (fsyncs, under load 100s of ms).
    const wanted = state ?? (persistedState(stored) === "draining" ? "draining" : "online");
    if (persistedState(stored) === wanted && !this.store.hasPendingWrite(DATAPLANE_TYPE.kind, mesh, name)) return this.view(stored);
    const updated = await this.store.update(DATAPLANE_TYPE, mesh, name, (current) => {
      const next = state ?? (persistedState(current) === "draining" ? "draining" : "online");
      if (persistedState(current) === next) return undefined;
      this.log.info({ mesh, name, from: persistedState(current), to: next }, "dataplane state changed");
      return { ...current, status: statusAt(next, nowMs) };
    });
    if (!updated) throw notFound(`dataplane ${mesh}/${name} is not registered (PUT it first)`);
    this.lastSeenMs.set(key(mesh, name), Math.max(nowMs, this.lastSeenMs.get(key(mesh, name)) ?? 0));
    // No notify here: a state change was a store write (which wakes the Dataplane list's long-polls), and a
    // heartbeat that changes nothing watched must wake nobody (with 1 000 sidecars that is 100 per second).
    return this.view(updated);
  }

  /** DELETE: graceful deregistration; the dataplane is gone, not offline. */
  async deregister(mesh: string, name: string): Promise<boolean> {
    this.lastSeenMs.delete(key(mesh, name));
    return this.store.delete(DATAPLANE_TYPE, mesh, name);
  }

  /** The resource as served: the stored Dataplane with a live `status` {state, lastSeenTime}. */
  view(resource: Resource): Resource {
    const nowMs = this.now();
    return { ...resource, status: statusAt(this.stateOf(resource, nowMs), this.lastSeen(resource)) };
  }

  /** Persists online→offline transitions (so they survive restarts) and deletes long-offline dataplanes. */
  async sweep(): Promise<void> {
    const nowMs = this.now();
    for (const dp of this.store.list(DATAPLANE_TYPE.kind)) {
      const state = this.stateOf(dp, nowMs);
      const seenMs = this.lastSeen(dp);
      if (state !== "offline") continue;
      if (nowMs - seenMs >= this.opts.offlineGcAgeMs) {
        this.log.info({ mesh: dp.mesh, name: dp.name, lastSeenTime: new Date(seenMs).toISOString() }, "garbage-collecting offline dataplane");
        await this.deregister(dp.mesh, dp.name);
      } else if (persistedState(dp) !== "offline") {
        // Re-checked inside the write queue: a heartbeat queued meanwhile must not be overwritten by "offline".
        await this.store.update(DATAPLANE_TYPE, dp.mesh, dp.name, (current) => {
          if (this.stateOf(current, this.now()) !== "offline" || persistedState(current) === "offline") return undefined;
          this.log.warn({ mesh: dp.mesh, name: dp.name, lastSeenTime: new Date(seenMs).toISOString() }, "dataplane went offline (missed heartbeats)");
          return { ...current, status: statusAt("offline", this.lastSeen(current)) };
        });
      }
    }
  }

  start(): void {
    const everyMs = Math.max(200, Math.min(this.opts.offlineTimeoutMs / 2, 10_000));
    this.timer = setInterval(() => {
      this.sweep().catch((err: unknown) => this.log.error({ err }, "dataplane sweep failed"));
    }, everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private stateOf(dp: Resource, nowMs: number): DataplaneState {
    const persisted = persistedState(dp);
    if (persisted === "offline" && !this.lastSeenMs.has(key(dp.mesh, dp.name))) return "offline";
    return nowMs - this.lastSeen(dp) > this.opts.offlineTimeoutMs ? "offline" : (persisted === "draining" ? "draining" : "online");
  }

  /**
   * Last heartbeat: from memory, else the persisted time. After a restart an online dataplane is given
   * the boot time, so it has one timeout to heartbeat again and is never collected earlier than it should be.
   */
  private lastSeen(dp: Resource): number {
    const mem = this.lastSeenMs.get(key(dp.mesh, dp.name));
    if (mem !== undefined) return mem;
    const persisted = Date.parse((dp.status as DataplaneStatus | undefined)?.lastSeenTime ?? "") || 0;
    return persistedState(dp) === "offline" ? persisted : Math.max(persisted, this.bootMs);
  }
}

function key(mesh: string, name: string): string {
  return `${mesh}/${name}`;
}

function statusAt(state: DataplaneState, ms: number): DataplaneStatus {
  return { state, lastSeenTime: new Date(ms).toISOString() };
}

function persistedState(dp: Resource): DataplaneState | undefined {
  return (dp.status as DataplaneStatus | undefined)?.state;
}

function allInboundsNotReady(doc: Record<string, unknown>): boolean {
  const inbound = (doc.networking as { inbound?: Array<{ state?: string }> } | undefined)?.inbound;
  return Array.isArray(inbound) && inbound.length > 0 && inbound.every((ib) => ib?.state === "NotReady");
}
