// Reads Kuma REST list endpoints: follows `next`/`size`/`offset` pagination to the end, classifies every
// failure (Unleash-style: 401/403 stop, 429/5xx/network back off), and long-polls when the server offers ETags.
import { MESH_TYPE, type Resource, type ResourceType } from "../kuma-rest/resources.js";
import { retryAfterMs } from "./backoff.js";
import { httpGet, type HttpReply, RequestTimeoutError } from "./http-get.js";
import type { SyncErrorReason } from "./metrics.js";

export class SyncError extends Error {
  constructor(
    readonly reason: SyncErrorReason,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "SyncError";
  }

  /** 401/403: retrying with the same credentials cannot help. */
  get fatal(): boolean {
    return this.reason === "unauthorized" || this.reason === "forbidden";
  }
}

export interface KumaClientOptions {
  /** e.g. http://127.0.0.1:5681 (no trailing slash). */
  baseUrl: string;
  token?: string;
  mesh: string;
  /** Per request. @default 10000 */
  requestTimeoutMs?: number;
  /** Page size asked for. @default 100 */
  pageSize?: number;
  /** Most bytes read for one list (all its pages together): --control-plane-max-list-bytes. */
  maxListBytes: number;
}

export interface ListResult {
  items: Resource[];
  /** ETag of the collection when the server sends one (the embedded control plane does; Kuma does not). */
  etag?: string;
  /** The server has no such list (an optional type answered 404). */
  missing?: boolean;
}

/** Most list pages one sync reads, every kind together: a `next` chain that never cycles (offset+1) ends here. */
export const MAX_PAGES_PER_SYNC = 2000;

/** What one sync may still read, shared by every list of it (they are fetched in parallel). */
export interface SyncBudget {
  left: number;
  limit: number;
  pagesLeft: number;
}

/** A fresh budget for one sync: `maxListBytes` for all its lists together. */
export function syncBudget(maxListBytes: number): SyncBudget {
  return { left: maxListBytes, limit: maxListBytes, pagesLeft: MAX_PAGES_PER_SYNC };
}

export class KumaClient {
  constructor(private readonly opts: KumaClientOptions) {}

  /** `/meshes/{mesh}/{plural}`; for Mesh itself `/meshes?name={mesh}` (a substring filter: the caller keeps the exact name). */
  listUrl(type: ResourceType): URL {
    const mesh = encodeURIComponent(this.opts.mesh);
    const url = new URL(type === MESH_TYPE ? `${this.opts.baseUrl}/meshes` : `${this.opts.baseUrl}/meshes/${mesh}/${type.plural}`);
    if (type === MESH_TYPE) url.searchParams.set("name", this.opts.mesh);
    url.searchParams.set("size", String(this.opts.pageSize ?? 100));
    return url;
  }

  /**
   * Every item of a kind in the mesh, across all pages; with `optional`, a 404 on the first page is an empty,
   * missing list. At most maxListBytes are read (all pages together), and a `next` link leading back to a page
   * already read is an error, not a loop.
   */
  async listAll(type: ResourceType, signal?: AbortSignal, optional = false, budget: SyncBudget = syncBudget(this.opts.maxListBytes)): Promise<ListResult> {
    let url = this.listUrl(type);
    const items: Resource[] = [];
    const seen = new Set<string>();
    let etag: string | undefined;
    for (let page = 0; budget.pagesLeft-- > 0; page++) {
      seen.add(url.toString());
      const res = await this.request(url, {}, this.opts.requestTimeoutMs ?? 10_000, signal);
      if (res.status === 404 && optional && page === 0) {
        res.discard();
        return { items: [], missing: true };
      }
      if (res.status !== 200) throw classify(res, `GET ${url.pathname}`);
      if (page === 0) etag = res.headers.get("etag") ?? undefined;
      const body = await readPage(res, url, budget);
      items.push(...body.items);
      if (!body.next) return { items, ...(etag ? { etag } : {}) };
      // Take only size/offset from `next`: its host is whatever the server saw, which may not be reachable from here.
      const next = new URL(body.next, url);
      const following = new URL(url);
      for (const [k, v] of next.searchParams) following.searchParams.set(k, v);
      if (seen.has(following.toString())) {
        throw new SyncError("bad_response", `${url.pathname}: pagination cycles (next = ${following.search}, a page already read)`);
      }
      url = following;
    }
    throw new SyncError("bad_response", `${url.pathname}: the sync read more than ${MAX_PAGES_PER_SYNC} pages (all lists together)`);
  }

  /**
   * Long-poll one list: resolves "unchanged" on 304, "changed" on 200 with a different ETag, and
   * "unsupported" when the server answered 200 with the same ETag (it ignores If-None-Match).
   */
  async waitForChange(type: ResourceType, etag: string, waitMs: number, signal: AbortSignal): Promise<"changed" | "unchanged" | "unsupported"> {
    const url = this.listUrl(type);
    url.searchParams.set("wait", `${Math.round(waitMs)}ms`);
    const res = await this.request(url, { "if-none-match": etag }, waitMs + (this.opts.requestTimeoutMs ?? 10_000), signal);
    if (res.status === 304) {
      res.discard();
      return "unchanged";
    }
    if (res.status !== 200) throw classify(res, `GET ${url.pathname} (watch)`);
    res.discard();
    return res.headers.get("etag") === etag ? "unsupported" : "changed";
  }

  /** One GET with the token and a timeout; failures become SyncErrors (an abort by `signal` is rethrown). */
  async request(url: URL, headers: Record<string, string>, timeoutMs: number, signal?: AbortSignal): Promise<HttpReply> {
    const auth: Record<string, string> = this.opts.token ? { authorization: `Bearer ${this.opts.token}` } : {};
    try {
      return await httpGet(url, { accept: "application/json", ...auth, ...headers }, timeoutMs, signal);
    } catch (err) {
      if (err instanceof RequestTimeoutError) throw new SyncError("timeout", `GET ${url.pathname}: no answer within ${timeoutMs}ms`);
      if (signal?.aborted) throw err;
      const e = err as NodeJS.ErrnoException;
      throw new SyncError("network", `GET ${url.origin}${url.pathname}: ${e.code ?? e.message}`);
    }
  }
}

export function classify(res: HttpReply, what: string): SyncError {
  res.discard();
  const s = res.status;
  if (s === 401) return new SyncError("unauthorized", `${what}: 401 Unauthorized (check --control-plane-token)`);
  if (s === 403) return new SyncError("forbidden", `${what}: 403 Forbidden (the token may not read policies)`);
  if (s === 429) return new SyncError("rate_limited", `${what}: 429 Too Many Requests`, retryAfterMs(res.headers.get("retry-after")));
  if (s >= 500) return new SyncError("server_error", `${what}: ${s}`, retryAfterMs(res.headers.get("retry-after")));
  return new SyncError("client_error", `${what}: unexpected status ${s}`);
}

/** Reads a response body as text, failing as soon as it would take the list past its byte budget. */
export async function readLimited(res: HttpReply, url: URL, budget: { left: number; limit: number }): Promise<string> {
  const tooLarge = () =>
    new SyncError("bad_response", `${url.pathname}: list larger than ${budget.limit} bytes (raise --control-plane-max-list-bytes if the policies really are this big)`);
  if (Number(res.headers.get("content-length") ?? 0) > budget.left) {
    res.abort();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  for await (const chunk of res.body) {
    budget.left -= chunk.byteLength;
    if (budget.left < 0) {
      res.abort();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function readPage(res: HttpReply, url: URL, budget: { left: number; limit: number }): Promise<{ items: Resource[]; next: string | null }> {
  let body: unknown;
  try {
    body = JSON.parse(await readLimited(res, url, budget));
  } catch (err) {
    if (err instanceof SyncError) throw err;
    // A connection cut mid-body (control plane killed while answering) is a network failure, not a bad server.
    const reason = err instanceof SyntaxError ? "bad_response" : "network";
    throw new SyncError(reason, `${url.pathname}: could not read the list body: ${(err as Error).message}`);
  }
  const page = body as { items?: unknown; next?: unknown };
  if (!page || typeof page !== "object" || !Array.isArray(page.items)) {
    throw new SyncError("bad_response", `${url.pathname}: expected a Kuma list {total, items, next}`);
  }
  const next = typeof page.next === "string" && page.next !== "" ? page.next : null;
  return { items: page.items as Resource[], next };
}
