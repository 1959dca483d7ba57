// The embedded control plane's per-dataplane policy set (`GET /meshes/{mesh}/dataplanes/{name}/_policy-set`):
// found through `features` in `GET /`, read instead of the full lists while the Dataplane the control plane
// holds reads exactly as this sidecar's own (else its selection could miss a policy), long-polled on its ETag.
// A long-poll on the set it holds asks for only what changed (kuma-rest/features.ts DELTA_REQUEST_HEADER).
import { DELTA_BASE_HEADER, DELTA_REQUEST_HEADER, deltaItemKey, POLICY_SET_FEATURE } from "../kuma-rest/features.js";
import type { Resource } from "../kuma-rest/resources.js";
import type { Logger } from "../log.js";
import { dataplaneFromObject, type Dataplane } from "../policy/documents/dataplane.js";
import type { KumaVersion } from "../policy/model/kuma-version.js";
import type { HttpReply } from "./http-get.js";
import { arrayElements, objectMembers } from "./json-slices.js";
import { classify, type KumaClient, readLimited, SyncError, type SyncBudget } from "./kuma-client.js";

/** The key of the set's ETag among the list ETags a sync returns. */
export const POLICY_SET_WATCH = "_policy-set";

export interface PolicySetReaderOptions {
  baseUrl: string;
  mesh: string;
  /** This sidecar's Dataplane as its engine decides for it. */
  dataplane: () => Dataplane;
  /**
   * The Dataplane resource this sidecar registers, if it registers one. A sidecar started from --dataplane-tags
   * registers its inbound on a placeholder port its engine does not hold; the control plane's copy then reads as
   * that resource, not as the engine's Dataplane, and is accepted too: a port can only make the control plane's
   * selection wider (a `sectionName` matching it), never narrower, and the sidecar selects again from the set.
   */
  registered?: () => Record<string, unknown>;
  requestTimeoutMs?: number;
  log: Logger;
  /** The Kuma version in force (3.0 reads Dataplane inbounds without tags). */
  kumaVersion?: KumaVersion;
}

/** The selection-relevant reading of a Dataplane, for comparing the control plane's with ours. */
function identity(dp: Dataplane): string {
  const sorted = (o: Readonly<Record<string, string>> | undefined) => Object.entries(o ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const inbounds = dp.inbounds.map((i) => [i.name, i.declaredName ?? null, i.port ?? null, sorted(i.tags)]);
  return JSON.stringify([dp.mesh, dp.name, dp.proxyType, sorted(dp.labels), inbounds]);
}

export class PolicySetReader {
  /** Whether `GET /` lists the feature; undefined until a root could be read. */
  private offered: boolean | undefined;
  private warnedMismatch = false;

  constructor(
    private readonly client: KumaClient,
    private readonly opts: PolicySetReaderOptions,
  ) {}

  /** True while the control plane offers the endpoint but this sidecar cannot use it yet (not registered). */
  get pending(): boolean {
    return this.offered === true;
  }

  private url(): URL {
    const dp = this.opts.dataplane();
    return new URL(`${this.opts.baseUrl}/meshes/${encodeURIComponent(this.opts.mesh)}/dataplanes/${encodeURIComponent(dp.name)}/_policy-set`);
  }

  private async isOffered(signal: AbortSignal): Promise<boolean> {
    if (this.offered !== undefined) return this.offered;
    const rootUrl = new URL(`${this.opts.baseUrl}/`);
    const res = await this.client.request(rootUrl, {}, this.timeoutMs(), signal);
    if (res.status !== 200) {
      res.discard();
      return (this.offered = false); // no Kuma API root here: a Kuma-compatible server with lists only
    }
    const rootBudget = { left: 1 << 20, limit: 1 << 20 };
    const root = await readLimited(res, rootUrl, rootBudget)
      .then((text) => JSON.parse(text) as { features?: unknown } | undefined)
      .catch((err: unknown) => {
        if (signal.aborted) throw err;
        return undefined;
      });
    this.offered = Array.isArray(root?.features) && root.features.includes(POLICY_SET_FEATURE);
    if (this.offered) this.opts.log.info("the control plane serves this dataplane's own policy set; reading it instead of the full lists");
    return this.offered;
  }

  /**
   * This dataplane's set (policies that select it, Mesh and service resources) and its ETag; undefined when the
   * full lists must be read: the endpoint is not offered (a Kuma control plane), the Dataplane is not registered
   * (yet), or it is registered as a Dataplane whose selection could differ from ours.
   */
  async read(signal: AbortSignal, budget: SyncBudget): Promise<{ items: Resource[]; etag: string } | undefined> {
    if (!(await this.isOffered(signal))) return undefined;
    const url = this.url();
    const res = await this.client.request(url, {}, this.timeoutMs(), signal);
    if (res.status === 404) {
      res.discard();
      return undefined;
    }
    if (res.status !== 200) throw classify(res, `GET ${url.pathname}`);
    return this.setFrom(res, url, budget);
  }

  /** A 200 answer's set, checked as read() does; undefined when its Dataplane is not read as ours. */
  private async setFrom(res: HttpReply, url: URL, budget: SyncBudget): Promise<{ items: Resource[]; etag: string } | undefined> {
    const etag = res.headers.get("etag") ?? "";
    let body: { dataplane?: unknown; items?: unknown };
    try {
      body = this.parseSet(await readLimited(res, url, budget), res.headers.get(DELTA_BASE_HEADER) !== null);
    } catch (err) {
      if (err instanceof SyncError) throw err;
      throw new SyncError(err instanceof SyntaxError ? "bad_response" : "network", `${url.pathname}: could not read the policy set: ${(err as Error).message}`);
    }
    if (!body || !Array.isArray(body.items) || !etag) throw new SyncError("bad_response", `${url.pathname}: expected {dataplane, items} with an ETag`);
    const base = res.headers.get(DELTA_BASE_HEADER);
    const keys: Array<string | undefined> = [];
    const items = base === null ? (body.items as Resource[]) : this.resolveDelta(body.items, base, url, keys);
    const served = dataplaneFromObject(body.dataplane, this.opts.kumaVersion).dataplane;
    if (!served || !this.isOurs(served)) {
      if (!this.warnedMismatch) {
        this.warnedMismatch = true;
        this.opts.log.warn("the control plane holds this Dataplane with other tags, labels or inbounds than the sidecar's own: reading the full lists");
      }
      this.held = undefined;
      return undefined;
    }
    this.warnedMismatch = false;
    const byKey = new Map<string, Resource>();
    items.forEach((item, i) => {
      const key = keys[i] ?? (typeof item?.type === "string" && typeof item.name === "string" ? deltaItemKey(item.type, item.name) : undefined);
      if (key !== undefined) byKey.set(key, item);
    });
    this.held = { etag, byKey };
    return { items, etag };
  }

  /**
   * The items of an answer relative to the set held (base: its ETag): an item left as it was comes as its key
   * and is the object held. An answer this sidecar cannot resolve is refused, and the next one asked for in full.
   */
  private resolveDelta(items: unknown[], base: string, url: URL, keys: Array<string | undefined>): Resource[] {
    const held = this.held;
    this.held = undefined; // set again once this answer is taken
    if (!held || held.etag !== base) throw new SyncError("bad_response", `${url.pathname}: an answer relative to a set this sidecar does not hold (${base})`);
    return items.map((item, i) => {
      if (typeof item !== "string") return item as Resource;
      const kept = held.byKey.get(item);
      if (!kept) throw new SyncError("bad_response", `${url.pathname}: an answer relative to the set held names ${item}, which it does not hold`);
      keys[i] = item; // the held object's key, as it was named: not made again
      return kept;
    });
  }

  /** The set last returned, by item key, for answers relative to it. */
  private held: { etag: string; byKey: Map<string, Resource> } | undefined;

  /**
   * The answer as JSON.parse reads it, except that an item served with the same text as in the last answer is
   * the object parsed then (nothing reads it again: fetched-set.ts keeps its reading by object).
   */
  private parseSet(text: string, delta: boolean): { dataplane?: unknown; items?: unknown } {
    const members = objectMembers(text);
    const rawItems = members?.get("items");
    const elements = rawItems === undefined ? undefined : arrayElements(rawItems);
    if (!members || !elements) return JSON.parse(text) as { dataplane?: unknown; items?: unknown };
    let dataplane: unknown;
    for (const [name, raw] of members) {
      if (name === "items") continue;
      const value: unknown = JSON.parse(raw); // every member is parsed: a body JSON.parse refuses is refused here too
      if (name === "dataplane") dataplane = value;
    }
    // Relative to the set held (delta), most items are their "kind/name" (a JSON string, read as it is) and the
    // last full answer's texts stay the ones the next full answer is read against.
    const parsed = new Map<string, unknown>();
    const items = elements.map((raw) => {
      if (delta && raw.charCodeAt(0) === 34) return JSON.parse(raw) as unknown;
      const item = parsed.get(raw) ?? this.lastItems.get(raw) ?? JSON.parse(raw);
      parsed.set(raw, item);
      return item;
    });
    if (!delta) this.lastItems = parsed;
    return { dataplane, items };
  }

  /** The last full answer's items by their text. */
  private lastItems = new Map<string, unknown>();

  /** Whether the control plane's Dataplane selects as ours: read as the engine's, or as the resource we registered. */
  private isOurs(served: Dataplane): boolean {
    const theirs = identity(served);
    if (theirs === identity(this.opts.dataplane())) return true;
    const registered = this.opts.registered?.();
    const asRegistered = registered ? dataplaneFromObject(registered, this.opts.kumaVersion).dataplane : undefined;
    return asRegistered !== undefined && theirs === identity(asRegistered);
  }

  /**
   * Long-poll on the set: as KumaClient.waitForChange, "changed" also when the Dataplane went away (404). A 200
   * answer carries the new set, returned with it (read as read() does) so that it is not fetched again.
   */
  async waitForChange(etag: string, waitMs: number, signal: AbortSignal, budget: SyncBudget): Promise<{ outcome: "changed" | "unchanged" | "unsupported"; set?: { items: Resource[]; etag: string } }> {
    const url = this.url();
    url.searchParams.set("wait", `${Math.round(waitMs)}ms`);
    const asksDelta = this.held?.etag === etag;
    const res = await this.client.request(url, { "if-none-match": etag, ...(asksDelta ? { [DELTA_REQUEST_HEADER]: "1" } : {}) }, waitMs + this.timeoutMs(), signal);
    if (res.status === 304 || res.status === 404) {
      res.discard();
      return { outcome: res.status === 304 ? "unchanged" : "changed" };
    }
    if (res.status !== 200) throw classify(res, `GET ${url.pathname} (watch)`); // it drops the body
    if (res.headers.get("etag") === etag) {
      res.discard();
      return { outcome: "unsupported" };
    }
    const set = await this.setFrom(res, url, budget);
    return set ? { outcome: "changed", set } : { outcome: "changed" };
  }

  private timeoutMs(): number {
    return this.opts.requestTimeoutMs ?? 10_000;
  }
}
