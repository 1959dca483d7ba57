// What a control-plane source holds between syncs: the items in force, the set's fingerprint and the validation
// memo. Reading a new batch gives nothing when it equals the one in force, else the set to apply, with every
// rejected item's last good version kept (a bad new Deny or Mesh never turns into an allow). No I/O.
import { createHash } from "node:crypto";
import type { Resource } from "../kuma-rest/resources.js";
import type { KumaVersion } from "../policy/model/kuma-version.js";
import type { Policy } from "../policy/documents/parse.js";
import type { MeshResources } from "../policy/documents/resources.js";
import { keepLastGoodBy, kindAndName, withFailClosedMeshes } from "./last-good.js";
import { mergeResources, nestsDeeperThan, type RejectedItem, stripVolatile, validateFetched, withoutTooDeepItems } from "./resource-set.js";
import { ValidationMemo } from "./validation-memo.js";

export interface NextSet {
  policies: Policy[];
  resources: MeshResources;
  /** Every item refused, and which of them keep a last good version (kind/name keys). */
  refused: RejectedItem[];
  keptKeys: Set<string>;
  /** The items in force once applied (the fresh good ones and the last good versions kept), by kind/name. */
  goodItems: Map<string, Resource>;
  fingerprint: string;
}

const itemKey = (item: Resource) => kindAndName(item.type, item.name);
const TOO_DEEP = Symbol("too deep");

export class FetchedSet {
  /** The items in force, by kind/name. */
  inForceItems = new Map<string, Resource>();
  private fingerprint: string | undefined;
  /** Validation results of the last batch's items, reused for the items a change left as they were. */
  readonly memo = new ValidationMemo();

  /**
   * Each item object's text (volatile fields left out), or TOO_DEEP: a source that hands over the same object for
   * an item served as it was (http-policy-set.ts) has it read once. Items are never changed once fetched.
   */
  private readonly readings = new WeakMap<object, string | typeof TOO_DEEP>();

  constructor(private readonly mesh: string) {}

  private reading(item: Resource): string | typeof TOO_DEEP {
    const known = typeof item === "object" && item !== null ? this.readings.get(item) : undefined;
    if (known !== undefined) return known;
    const reading = nestsDeeperThan(item) ? TOO_DEEP : JSON.stringify(stripVolatile(item));
    if (typeof item === "object" && item !== null) this.readings.set(item, reading);
    return reading;
  }

  /** The sha256 of an item's reading (not TOO_DEEP), kept by item object as the reading is. */
  private digest(item: Resource): Buffer {
    const known = typeof item === "object" && item !== null ? this.digests.get(item) : undefined;
    if (known !== undefined) return known;
    const digest = createHash("sha256").update(this.reading(item) as string).digest();
    if (typeof item === "object" && item !== null) this.digests.set(item, digest);
    return digest;
  }

  private readonly digests = new WeakMap<object, Buffer>();

  /** Forgets the fingerprint: the next batch is applied even if unchanged. */
  forget(): void {
    this.fingerprint = undefined;
  }

  /** The set to apply for `all`, or undefined when it is the batch in force (volatile fields aside). */
  next(all: Resource[], kumaVersion: KumaVersion | undefined, sourceOf: (item: Resource) => string): NextSet | undefined {
    const { items, rejected: deepRejected } = withoutTooDeepItems(all, (item) => this.reading(item) === TOO_DEEP);
    // Each item's text (no volatile fields) keys its validation memo and, through its sha256 (32 bytes each, so
    // their concatenation reads one way), makes the set's fingerprint. The digest is kept with the reading: an
    // edit of one item of a held set hashes that item's text and the 32-byte digests, not every item's text.
    const texts = items.map((item) => this.reading(item) as string);
    const hash = createHash("sha256");
    for (let i = 0; i < items.length; i++) hash.update(this.digest(items[i]!));
    const fingerprint = hash.update(JSON.stringify(deepRejected)).digest("hex");
    if (fingerprint === this.fingerprint) return undefined;
    const fresh = validateFetched(items, this.mesh, kumaVersion, sourceOf, { texts, memo: this.memo });
    const refused = [...fresh.rejected, ...deepRejected];
    // Last good versions are kept item by item, policies and resources alike (an invalid new Mesh keeps the
    // old Mesh: mTLS stays on), then read again like the fresh ones.
    const keptItems = refused.length === 0 ? [] : keepLastGoodBy(fresh.good, refused, this.inForceItems.size > 0 ? [...this.inForceItems.values()] : undefined, itemKey).slice(fresh.good.length);
    const kept = validateFetched(keptItems, this.mesh, kumaVersion, sourceOf);
    const both = mergeResources(fresh.resources, kept.resources);
    const goodItems = new Map<string, Resource>();
    for (const good of [fresh.good, kept.good]) for (let i = 0; i < good.length; i++) goodItems.set(itemKey(good[i]!), good[i]!);
    return {
      policies: [...fresh.policies, ...kept.policies],
      resources: { ...both, meshes: withFailClosedMeshes(both.meshes, refused) as MeshResources["meshes"] },
      refused,
      keptKeys: new Set(kept.good.map(itemKey)),
      goodItems,
      fingerprint,
    };
  }

  /** Records `set` as the one in force (after it was applied). */
  accept(set: NextSet): void {
    this.inForceItems = set.goodItems;
    this.fingerprint = set.fingerprint;
  }
}
