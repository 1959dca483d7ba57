// Kuma list replies shared by every resource type: size/offset pages with an absolute `next`, the `name`
// substring filter, and the collection ETag with If-None-Match / ?wait= long-poll.
import { DEFAULT_PAGE_SIZE, type GlobalResource, type ListPage, MAX_PAGE_SIZE } from "../kuma-rest/resources.js";
import { badRequest } from "./problems.js";
import { type ChangeNotifier, collectionKey, etagOf, parseWaitMs, renderWhenChanged } from "./watch.js";

/** The request fields a list reply reads. */
export interface ListRequest {
  url: URL;
  headers: Record<string, string | string[] | undefined>;
  abandoned: Promise<void>;
}

export interface ListReply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** The body already serialised (shared by every client of one page of one version). */
  bytes?: Buffer;
}

/**
 * A filtered, paged, ETagged list of the collection `items()` (its stored resources). Each version of the
 * collection is filtered and hashed once (shared by every waiter); `view` turns the stored resources of the
 * page served into what clients see (a Dataplane's live status), outside the ETag, so that what only the
 * view changes (a heartbeat's time) wakes no long-poll.
 */
export async function listReply<T extends GlobalResource>(
  req: ListRequest,
  notifier: ChangeNotifier,
  collection: { kind: string; mesh?: string },
  items: () => T[],
  view?: (item: T) => T,
): Promise<ListReply> {
  const nameFilter = req.url.searchParams.get("name") ?? "";
  const waitMs = parseWaitMs(req.url.searchParams.get("wait"));
  pageBounds(req.url); // reject bad size/offset before holding a long-poll
  const key = collectionKey(collection.kind, collection.mesh);
  const render = () =>
    notifier.rendered(key, nameFilter, () => {
      const filtered = items().filter((r) => r.name.includes(nameFilter));
      return { items: filtered, etag: etagOf(filtered) };
    });
  const { view: rendering, notModified } = await renderWhenChanged(key, render, header(req, "if-none-match"), waitMs, notifier, req.abandoned);
  if (notModified) return { status: 304, headers: { etag: rendering.etag } };
  // A view (a Dataplane's live status) changes without a new version, so only view-less pages are shared.
  if (view) return pageReply(req, rendering.items, { etag: rendering.etag }, view);
  const { size, offset } = pageBounds(req.url);
  const variant = `${nameFilter}\u0000${size}\u0000${offset}\u0000${header(req, "host") ?? ""}`;
  const bytes = notifier.renderedPage(key, variant, () => pageReply(req, rendering.items).body);
  return { status: 200, headers: { etag: rendering.etag }, bytes };
}

export function pageBounds(url: URL): { size: number; offset: number } {
  const sizeRaw = url.searchParams.get("size");
  const size = sizeRaw === null || sizeRaw === "" ? DEFAULT_PAGE_SIZE : Number(sizeRaw);
  // No offset, or an empty one, is 0: Number(null) and Number("") both are.
  const offset = Number(url.searchParams.get("offset"));
  const violations = [];
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) violations.push({ field: "size", message: `must be an integer from 1 to ${MAX_PAGE_SIZE}` });
  if (!Number.isInteger(offset) || offset < 0) violations.push({ field: "offset", message: "must be a non-negative integer (the `offset` of a `next` URL)" });
  if (violations.length) throw badRequest("invalid pagination parameters", violations);
  return { size, offset };
}

export function pageReply<T>(req: ListRequest, items: T[], headers: Record<string, string> = {}, view: (item: T) => T = (item) => item): ListReply {
  const { size, offset } = pageBounds(req.url);
  const pageItems = items.slice(offset, offset + size).map(view);
  let next: string | null = null;
  if (offset + size < items.length) {
    // An empty Host is legal (a request target without an authority); one that is no authority is the client's error.
    const host = header(req, "host") || "localhost";
    if (!URL.canParse(`http://${host}`)) throw badRequest(`the Host header ${JSON.stringify(host)} cannot name the next page (next URL)`);
    const nextUrl = new URL(req.url.pathname + req.url.search, `http://${host}`);
    nextUrl.searchParams.delete("wait");
    nextUrl.searchParams.set("size", String(size));
    nextUrl.searchParams.set("offset", String(offset + size));
    next = nextUrl.toString();
  }
  const body: ListPage<T> = { total: items.length, items: pageItems, next };
  return { status: 200, headers, body };
}

export function header(req: { headers: Record<string, string | string[] | undefined> }, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(", ") : v;
}
