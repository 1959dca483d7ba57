// Each Dataplane's own policy set (`GET /meshes/{mesh}/dataplanes/{name}/_policy-set`): the stored policies that
// select it — chosen by the sidecar's own selectForDataplane — plus the Mesh and service resources it decides
// with, the MeshIdentities whose selector matches it and the mesh's MeshTrusts, under an ETag of exactly that content. A write re-renders, and wakes, only the Dataplanes it can change.
import { DATAPLANE_TYPE, IDENTITY_TYPES, MESH_TYPE, POLICY_TYPES, type Resource, SERVICE_TYPES } from "../kuma-rest/resources.js";
import type { KumaVersion } from "../kuma-rest/kuma-version.js";
import { dataplaneFromObject, type Dataplane } from "../policy/documents/dataplane.js";
import { validatePolicyObject, type Policy } from "../policy/documents/parse.js";
import { matchingIdentities } from "../policy/documents/mesh-identity.js";
import { resourceFromObject } from "../policy/documents/resources.js";
import { selectForDataplane } from "../policy/selection/select.js";
import { deltaItemKey } from "../kuma-rest/features.js";
import type { ResourceStore, StoreChange } from "./store.js";
import { type ChangeNotifier, etagOf } from "./watch.js";

/** Per-dataplane renderings kept (one per registered Dataplane that asked); beyond this they are rebuilt. */
const MAX_SETS = 4096;

/** The notifier key a Dataplane's set is long-polled on. */
export function policySetKey(mesh: string, name: string): string {
  return `_policy-set/${mesh}/${name}`;
}

/** One stored policy as read by the engine; `policy` is absent for a stored file the engine rejects. */
interface Entry {
  item: Resource;
  policy?: Policy;
}

/** One Dataplane's rendered set. */
interface RenderedSet {
  dataplane: Dataplane;
  /** The stored Dataplane selected for, without its status (the sidecar checks it reads as its own). */
  document: Resource;
  /** kind/name of every policy item in the set. */
  keys: Set<string>;
  policyItems: Resource[];
  resourcesVersion: number;
  etag: string;
  bytes: Buffer;
  /** Every item served (policies, then resources), as stored objects: a write stores a new object. */
  items: Resource[];
  /** The set this one replaced, for answers relative to it (a sidecar holding that set). */
  previous?: { etag: string; items: ReadonlySet<Resource> };
  /** The answer relative to `previous`, rendered on first use. */
  deltaBytes?: Buffer;
  delta?: () => Buffer;
}

/** What a new rendering needs of the one it replaces. */
type ReplacedSet = Pick<RenderedSet, "etag" | "items" | "previous">;

export interface PolicySetView {
  etag: string;
  bytes: Buffer;
  /** The set this one replaced, and the answer relative to it (features.ts DELTA_REQUEST_HEADER). */
  previous?: { etag: string };
  delta?: () => Buffer;
}

/** kind/name of an item: the key of the set's policies, and how an answer relative to a set names one left as it was. */
const itemKey = deltaItemKey;

export class PolicySetIndex {
  /** mesh → kind/name → entry, built on first use of the mesh and kept current by store changes. */
  private readonly meshes = new Map<string, Map<string, Entry>>();
  private readonly resourcesVersions = new Map<string, number>();
  /** mesh/name → rendered set. */
  private readonly sets = new Map<string, RenderedSet>();
  /** Sets dropped to be selected again, kept until then (ETag and items only) as the base of the next one's answers. */
  private readonly dropped = new Map<string, ReplacedSet>();
  /** Sets rendered (selection run) so far: meshext_control_plane_policy_set_renders_total. */
  renders = 0;

  constructor(
    private readonly store: ResourceStore,
    private readonly notifier: ChangeNotifier,
    private readonly kumaVersion: KumaVersion,
  ) {
    store.on("change", (change) => this.changed(change));
  }

  /** The current set of a stored Dataplane, undefined when it is not registered (or unreadable). */
  view(mesh: string, name: string): PolicySetView | undefined {
    const id = `${mesh}/${name}`;
    const cached = this.sets.get(id);
    if (cached) {
      if (cached.resourcesVersion === this.resourcesVersion(mesh)) return cached;
      return this.remember(id, this.render(mesh, cached.document, cached.dataplane, cached.policyItems, cached.keys, cached));
    }
    const stored = this.store.get(DATAPLANE_TYPE.kind, mesh, name);
    const dataplane = stored ? dataplaneFromObject(stored, this.kumaVersion).dataplane : undefined;
    if (!dataplane) return undefined;
    const entries = [...this.entries(mesh).values()];
    const valid = entries.flatMap((e) => e.policy ?? []);
    const itemOf = new Map(entries.flatMap((e) => (e.policy ? [[e.policy, e.item] as const] : [])));
    const kept = selectForDataplane(valid, dataplane, this.kumaVersion).kept.map((p) => itemOf.get(p)!);
    // A stored policy the engine rejects goes to every set: the sidecar rejects it too and keeps its last good
    // version, where leaving it out would drop that version (a Deny turning into an allow).
    const rejected = entries.filter((e) => !e.policy).map((e) => e.item);
    const items = [...kept, ...rejected];
    const { status: _status, ...document } = stored!;
    const replaced = this.dropped.get(id);
    this.dropped.delete(id);
    return this.remember(id, this.render(mesh, document as Resource, dataplane, items, new Set(items.map((i) => itemKey(i.type, i.name))), replaced));
  }

  /** `set` as an answer to a sidecar holding the set it replaced: the items left as they were by key only. */
  private deltaAnswer(set: RenderedSet): Buffer {
    if (!set.deltaBytes) {
      const before = set.previous?.items ?? new Set<Resource>();
      const items = set.items.map((item) => (before.has(item) ? itemKey(item.type, item.name) : item));
      set.deltaBytes = Buffer.from(JSON.stringify({ dataplane: set.document, total: this.entries(set.dataplane.mesh).size, items }) + "\n");
    }
    return set.deltaBytes;
  }

  private drop(id: string): void {
    const set = this.sets.get(id);
    if (!set) return;
    this.sets.delete(id);
    if (!this.dropped.has(id) && this.dropped.size >= MAX_SETS) this.dropped.delete(this.dropped.keys().next().value!);
    this.dropped.set(id, { etag: set.etag, items: set.items, previous: set.previous });
  }

  private remember(id: string, set: RenderedSet): RenderedSet {
    if (!this.sets.has(id) && this.sets.size >= MAX_SETS) this.sets.delete(this.sets.keys().next().value!);
    this.sets.set(id, set);
    return set;
  }

  private render(mesh: string, document: Resource, dataplane: Dataplane, policyItems: Resource[], keys: Set<string>, replaced?: ReplacedSet): RenderedSet {
    this.renders++;
    const storedMesh = this.store.getGlobal(MESH_TYPE.kind, mesh);
    const resources = [...SERVICE_TYPES.flatMap((t) => this.store.list(t.kind, mesh)), ...this.identityItems(mesh, dataplane), ...(storedMesh ? [storedMesh as Resource] : [])];
    const items = [...policyItems, ...resources];
    const etag = etagOf(items);
    const body = { dataplane: document, total: this.entries(mesh).size, items };
    const bytes = Buffer.from(JSON.stringify(body, null, 2) + "\n");
    const set: RenderedSet = { dataplane, document, keys, policyItems, resourcesVersion: this.resourcesVersion(mesh), etag, bytes, items };
    // An answer relative to the set replaced, when it differs (a re-render to the same ETag keeps the older base).
    const previous = replaced && replaced.etag !== etag ? { etag: replaced.etag, items: new Set(replaced.items) } : replaced?.previous;
    if (previous) (set.previous = previous), (set.delta = () => this.deltaAnswer(set));
    return set;
  }

  /**
   * The MeshIdentities that can give this Dataplane its identity (selector matching its labels: the engine picks the
   * best of them) and every MeshTrust of the mesh; a stored one the engine cannot read goes to every set, as a
   * rejected policy does, so the sidecar keeps its last good version.
   */
  private identityItems(mesh: string, dataplane: Dataplane): Resource[] {
    const selects = (item: Resource) => {
      const read = resourceFromObject(item).resource;
      return read?.kind !== "MeshIdentity" || matchingIdentities([read], dataplane).length > 0;
    };
    return IDENTITY_TYPES.flatMap((t) => this.store.list(t.kind, mesh).filter((item) => t.kind !== "MeshIdentity" || selects(item)));
  }

  private entries(mesh: string): Map<string, Entry> {
    let entries = this.meshes.get(mesh);
    if (!entries) {
      entries = new Map();
      for (const t of POLICY_TYPES) for (const item of this.store.list(t.kind, mesh)) entries.set(itemKey(t.kind, item.name), this.read(item));
      this.meshes.set(mesh, entries);
    }
    return entries;
  }

  private read(item: Resource): Entry {
    const { policy } = validatePolicyObject(item, this.kumaVersion);
    return policy ? { item, policy } : { item };
  }

  private resourcesVersion(mesh: string): number {
    return this.resourcesVersions.get(mesh) ?? 0;
  }

  /** Keeps the index current and wakes the sets a write can change (a woken set whose ETag stays answers nobody). */
  private changed(change: StoreChange): void {
    if (change.kind === MESH_TYPE.kind || [...SERVICE_TYPES, ...IDENTITY_TYPES].some((t) => t.kind === change.kind)) {
      const mesh = change.kind === MESH_TYPE.kind ? change.name : change.mesh!;
      this.resourcesVersions.set(mesh, this.resourcesVersion(mesh) + 1);
      this.wakeMesh(mesh);
      return;
    }
    const mesh = change.mesh;
    if (mesh === undefined) return;
    if (change.kind === DATAPLANE_TYPE.kind) {
      // A state change (heartbeat online ↔ draining, offline) keeps the set; other tags or inbounds select again.
      const id = `${mesh}/${change.name}`;
      const stored = this.store.get(DATAPLANE_TYPE.kind, mesh, change.name);
      const now = stored ? dataplaneFromObject(stored, this.kumaVersion).dataplane : undefined;
      if (now && JSON.stringify(now) === JSON.stringify(this.sets.get(id)?.dataplane)) return;
      this.drop(id);
      this.notifier.touch(policySetKey(mesh, change.name));
      return;
    }
    if (!POLICY_TYPES.some((t) => t.kind === change.kind)) return;
    const entries = this.meshes.get(mesh);
    if (!entries) return; // nobody asked for a set of this mesh yet
    const key = itemKey(change.kind, change.name);
    const stored = change.op === "put" ? this.store.get(change.kind, mesh, change.name) : undefined;
    const entry = stored ? this.read(stored) : undefined;
    if (entry) entries.set(key, entry);
    else entries.delete(key);
    // A route changes what route-naming targetRefs select: every set of the mesh is selected again.
    if (change.kind === "MeshHTTPRoute") return this.wakeMesh(mesh, () => true);
    const routes = [...entries.values()].flatMap((e) => (e.policy?.type === "MeshHTTPRoute" ? [e.policy] : []));
    // Rejected versions go to every set; a valid one to the sets whose Dataplane it selects (the same
    // selectForDataplane, on this policy alone: it decides policy by policy, routes resolved against the mesh).
    const selects = (dp: Dataplane) => entry !== undefined && (!entry.policy || selectForDataplane([entry.policy, ...routes], dp, this.kumaVersion).kept.includes(entry.policy));
    for (const [id, set] of this.sets) {
      if (!id.startsWith(`${mesh}/`)) continue;
      const had = set.keys.has(key);
      const has = selects(set.dataplane);
      if (!had && !has) continue;
      // The set as a fresh selection would list it: a kept policy keeps its place, a newly selecting one comes last.
      const items = has && had ? set.policyItems.map((i) => (itemKey(i.type, i.name) === key ? entry!.item : i)) : had ? set.policyItems.filter((i) => itemKey(i.type, i.name) !== key) : [...set.policyItems, entry!.item];
      const keys = new Set(set.keys);
      if (has) keys.add(key);
      else keys.delete(key);
      this.sets.set(id, this.render(mesh, set.document, set.dataplane, items, keys, set));
      this.notifier.touch(policySetKey(mesh, id.slice(mesh.length + 1)));
    }
  }

  /**
   * Wakes every rendered set of `mesh` that a change reaches: `affected` ones are dropped (their policies are
   * selected again), and with `affected` absent (a resource changed) all are re-rendered from their policies.
   */
  private wakeMesh(mesh: string, affected?: (set: RenderedSet) => boolean): void {
    const prefix = `${mesh}/`;
    for (const [id, set] of this.sets) {
      if (!id.startsWith(prefix)) continue;
      if (affected && !affected(set)) continue;
      if (affected) this.drop(id);
      this.notifier.touch(policySetKey(mesh, id.slice(prefix.length)));
    }
  }
}
