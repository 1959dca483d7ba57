// "Faster than polling" for list endpoints: a content ETag per collection, and long-poll waiters that
// hold `If-None-Match` + `?wait=` requests until something changes (Kuma has neither; plain GETs still work).
import { createHash } from "node:crypto";
import { parseDurationMs } from "../config/duration.js";
import { badRequest } from "./problems.js";
import { TurnSlices } from "./turn-slices.js";

/** Longest accepted `?wait=`; a client asking more is held this long. */
export const MAX_WAIT_MS = 60_000;

/** Strong ETag over the JSON of a whole collection (every page of one list carries the same tag). */
export function etagOf(value: unknown): string {
  return `"${createHash("sha256").update(JSON.stringify(value)).digest("base64url").slice(0, 27)}"`;
}

/** The entity tags an `If-None-Match` lists, weak ones as their strong form. */
export function etagsOf(ifNoneMatch: string | undefined): string[] {
  return ifNoneMatch ? ifNoneMatch.split(",").map((t) => t.trim().replace(/^W\//, "")) : [];
}

/** True when an If-None-Match header names this ETag (or is `*`). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  return etagsOf(ifNoneMatch).some((tag) => tag === "*" || tag === etag);
}

/** Parses `?wait=30s` (Go-style duration or milliseconds); undefined when absent. */
export function parseWaitMs(raw: string | null): number | undefined {
  if (raw === null || raw === "") return undefined;
  const ms = parseDurationMs(raw);
  if (ms === undefined) throw badRequest(`query parameter wait: expected a duration such as 30s, got ${JSON.stringify(raw)}`);
  return Math.min(ms, MAX_WAIT_MS);
}

/** A collection: one kind in one mesh ("Kind/mesh"), in every mesh ("Kind/*"), or a global kind ("Kind/"). */
export function collectionKey(kind: string, mesh: string | undefined): string {
  return `${kind}/${mesh ?? ""}`;
}

/** Renderings of collection versions kept for sharing; a bound on what hostile `?name=` filters can pin. */
const MAX_RENDERINGS = 1024;

/** Most bytes of rendered pages kept for sharing (pages of up to 1 000 items, under many filters). */
const MAX_RENDERED_BYTES = 64 * 1024 * 1024;

/** True for a request that may be held: `?wait=` with If-None-Match (its wait is not latency). */
export function isLongPoll(url: URL, headers: Record<string, string | string[] | undefined>): boolean {
  return Boolean(url.searchParams.get("wait")) && headers["if-none-match"] !== undefined;
}

/**
 * Long-poll waiters and versions per collection. notify(kind, mesh) bumps that collection (and its kind's
 * every-mesh list) and wakes only their waiters; a renderer memoised with rendered() runs once per
 * version, however many waiters read it. Waiters are released — woken by a change, or at the end of
 * their wait — through `slices`, a few per turn of the event loop, and the server takes long-polls in the
 * same way, so neither a change nor a thousand waits ending (or re-arming) together holds other requests.
 */
export class ChangeNotifier {
  /** Long-poll work spread over turns: releases, and the server's intake of held requests. */
  readonly slices = new TurnSlices();
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly versions = new Map<string, number>();
  private readonly renderings = new Map<string, { version: number; value: unknown }>();
  private readonly pages = new Map<string, { version: number; bytes: Buffer }>();
  private pageBytes = 0;
  private closed = false;
  /** Pages serialised so far (each (collection, version, filter, page) once): meshext_control_plane_list_page_renders_total. */
  pageRenders = 0;

  /** A store write to `kind` in `mesh` (undefined for a global kind). */
  notify(kind: string, mesh?: string): void {
    const keys = mesh === undefined ? [collectionKey(kind, undefined)] : [collectionKey(kind, mesh), collectionKey(kind, "*")];
    for (const key of keys) {
      this.versions.set(key, this.version(key) + 1);
      this.wake(key);
    }
  }

  version(key: string): number {
    return this.versions.get(key) ?? 0;
  }

  /** `render()` of this version of the collection, computed once and shared (`variant` tells apart filters). */
  rendered<T>(key: string, variant: string, render: () => T): T {
    const id = `${key}?${variant}`;
    const version = this.version(key);
    const hit = this.renderings.get(id);
    if (hit && hit.version === version) return hit.value as T;
    if (this.renderings.size >= MAX_RENDERINGS) this.renderings.clear();
    const value = render();
    this.renderings.set(id, { version, value });
    return value;
  }

  /**
   * The serialised reply body of one page of this version of the collection (`variant` tells apart filters,
   * page bounds and the host its `next` link names): JSON.stringify runs once, every waiter sends the same bytes.
   */
  renderedPage(key: string, variant: string, render: () => unknown): Buffer {
    const id = `${key}?${variant}`;
    const version = this.version(key);
    const hit = this.pages.get(id);
    if (hit && hit.version === version) return hit.bytes;
    const bytes = Buffer.from(JSON.stringify(render(), null, 2) + "\n");
    this.pageRenders++;
    if (hit) this.pageBytes -= hit.bytes.length;
    if (this.pages.size >= MAX_RENDERINGS || this.pageBytes + bytes.length > MAX_RENDERED_BYTES) {
      this.pages.clear();
      this.pageBytes = 0;
    }
    this.pages.set(id, { version, bytes });
    this.pageBytes += bytes.length;
    return bytes;
  }

  /** Bumps collection `key` and wakes its waiters (for collections that are not one kind's list). */
  touch(key: string): void {
    this.versions.set(key, this.version(key) + 1);
    this.wake(key);
  }

  /** Resolves at the next change of collection `key`, after timeoutMs, when `abandoned` resolves, or on close. */
  wait(key: string, timeoutMs: number, abandoned: Promise<void>): Promise<void> {
    if (this.closed || timeoutMs <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      let set = this.waiters.get(key);
      if (!set) this.waiters.set(key, (set = new Set()));
      const waiting = set;
      const done = () => {
        clearTimeout(timer);
        waiting.delete(done);
        if (waiting.size === 0 && this.waiters.get(key) === waiting) this.waiters.delete(key);
        resolve();
      };
      const timer = setTimeout(() => this.slices.run(done), timeoutMs);
      waiting.add(done);
      void abandoned.then(done);
    });
  }

  /** Long-poll requests held right now, per collection kind (a key's part before its "/"); for /metrics. */
  waitersByKind(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const [key, set] of this.waiters) {
      const kind = key.slice(0, key.indexOf("/"));
      counts.set(kind, (counts.get(kind) ?? 0) + set.size);
    }
    return counts;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Releases every waiter now and makes later waits return at once (shutdown). */
  close(): void {
    this.closed = true;
    for (const key of [...this.waiters.keys()]) this.wake(key);
  }

  /** Releases the waiters of `key` through `slices` (a few per turn; requests that come meanwhile go between). */
  private wake(key: string): void {
    const woken = this.waiters.get(key);
    if (!woken) return;
    this.waiters.delete(key);
    for (const done of woken) this.slices.run(done);
  }
}

/**
 * Long-poll: re-renders collection `key` at each of its changes until the ETag differs from the client's,
 * or the wait ends. Returns the last rendering and whether the client's tag still matches (→ 304).
 */
export async function renderWhenChanged<T extends { etag: string }>(
  key: string,
  render: () => T,
  ifNoneMatch: string | undefined,
  waitMs: number | undefined,
  notifier: ChangeNotifier,
  abandoned: Promise<void>,
): Promise<{ view: T; notModified: boolean }> {
  let view = render();
  if (!etagMatches(ifNoneMatch, view.etag)) return { view, notModified: false };
  let gone = false;
  void abandoned.then(() => (gone = true));
  const deadline = Date.now() + (waitMs ?? 0);
  while (!gone && Date.now() < deadline) {
    await notifier.wait(key, deadline - Date.now(), abandoned);
    view = render();
    if (!etagMatches(ifNoneMatch, view.etag)) return { view, notModified: false };
    if (notifier.isClosed) break;
  }
  return { view, notModified: true };
}
