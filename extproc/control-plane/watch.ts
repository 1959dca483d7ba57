// "Faster than polling" for list endpoints: a content ETag per collection, and long-poll waiters that
// hold `If-None-Match` + `?wait=` requests until something changes (Kuma has neither; plain GETs still work).
import { createHash } from "node:crypto";
import { parseDurationMs } from "../config/duration.js";
import { badRequest } from "./problems.js";

/** Longest accepted `?wait=`; a client asking more is held this long. */
export const MAX_WAIT_MS = 60_000;

/** Strong ETag over the JSON of a whole collection (every page of one list carries the same tag). */
export function etagOf(value: unknown): string {
  return `"${createHash("sha256").update(JSON.stringify(value)).digest("base64url").slice(0, 27)}"`;
}

/** True when an If-None-Match header names this ETag (or is `*`). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(",").some((t) => {
    const tag = t.trim().replace(/^W\//, "");
    return tag === "*" || tag === etag;
  });
}

/** Parses `?wait=30s` (Go-style duration or milliseconds); undefined when absent. */
export function parseWaitMs(raw: string | null): number | undefined {
  if (raw === null || raw === "") return undefined;
  const ms = parseDurationMs(raw);
  if (ms === undefined) throw badRequest(`query parameter wait: expected a duration such as 30s, got ${JSON.stringify(raw)}`);
  return Math.min(ms, MAX_WAIT_MS);
}

/** Wakes every waiter on any change; the server calls notify() after store writes and dataplane status changes. */
export class ChangeNotifier {
  private waiters = new Set<() => void>();
  private closed = false;

  notify(): void {
    const woken = this.waiters;
    this.waiters = new Set();
    for (const wake of woken) wake();
  }

  /** Resolves at the next change, after timeoutMs, when `abandoned` resolves, or when the notifier closes. */
  wait(timeoutMs: number, abandoned: Promise<void>): Promise<void> {
    if (this.closed || timeoutMs <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(done);
      void abandoned.then(done);
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Releases every waiter now and makes later waits return at once (shutdown). */
  close(): void {
    this.closed = true;
    this.notify();
  }
}

/**
 * Long-poll: re-renders until the ETag differs from the client's, or the wait ends. Returns the last
 * rendering and whether the client's tag still matches (→ 304).
 */
export async function renderWhenChanged<T extends { etag: string }>(
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
    await notifier.wait(deadline - Date.now(), abandoned);
    view = render();
    if (!etagMatches(ifNoneMatch, view.etag)) return { view, notModified: false };
    if (notifier.isClosed) break;
  }
  return { view, notModified: true };
}
