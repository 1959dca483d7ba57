// Durable resource store: one readable YAML file per resource under DATA_DIR/meshes/<mesh>/<plural>/<name>.yaml
// (global types: DATA_DIR/<plural>/<name>.yaml), an in-memory index for reads, writes serialised through one
// queue and made crash-safe by writeFileAtomic.
import { isResourceName } from "../policy/documents/resource-name.js";
import { EventEmitter } from "node:events";
import { mkdir, readdir, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { stringify as stringifyYaml } from "yaml";
import { removeFileDurable, TEMP_PREFIX, writeFileAtomic } from "../atomic-file.js";
import { ALL_TYPES, GLOBAL_TYPES, type GlobalResource, type Resource, type ResourceType } from "../kuma-rest/resources.js";
import type { Logger } from "../log.js";
import { parseYamlBounded, yamlLimitViolation } from "../policy/documents/yaml-limits.js";

const FILE_HEADER = "# Managed by the meshext control plane. Edits here are read at its next start; prefer PUT through the API.\n";

export interface StoreChange {
  kind: string;
  /** Absent for a global resource. */
  mesh?: string;
  name: string;
  op: "put" | "delete";
}

export class ResourceStore extends EventEmitter<{ change: [StoreChange] }> {
  /** kind → "mesh/name" → resource. */
  private readonly byKind = new Map<string, Map<string, Resource>>();
  /** Global kind → name → resource. */
  private readonly globalByKind = new Map<string, Map<string, GlobalResource>>();
  private queue: Promise<unknown> = Promise.resolve();
  /** "kind/mesh/name" → writes of that resource queued or running. */
  private readonly pendingWrites = new Map<string, number>();
  private revisionValue = 0;

  private constructor(
    readonly dataDir: string,
    private readonly log: Logger,
  ) {
    super();
    for (const t of ALL_TYPES) this.byKind.set(t.kind, new Map());
    for (const t of GLOBAL_TYPES) this.globalByKind.set(t.kind, new Map());
  }

  /** Opens (creating if needed) the data directory and loads every resource file; skips and logs bad files. */
  static async open(dataDir: string, log: Logger): Promise<ResourceStore> {
    const store = new ResourceStore(dataDir, log);
    await mkdir(join(dataDir, "meshes"), { recursive: true });
    await store.load();
    return store;
  }

  /** Bumped on every committed change; never goes back within a process. */
  get revision(): number {
    return this.revisionValue;
  }

  /** Resources of a kind, in one mesh or all, sorted by (mesh, name) as Kuma does. */
  list(kind: string, mesh?: string): Resource[] {
    const all = [...(this.byKind.get(kind)?.values() ?? [])].filter((r) => mesh === undefined || r.mesh === mesh);
    return all.sort((a, b) => (a.mesh === b.mesh ? cmp(a.name, b.name) : cmp(a.mesh, b.mesh)));
  }

  get(kind: string, mesh: string, name: string): Resource | undefined {
    return this.byKind.get(kind)?.get(`${mesh}/${name}`);
  }

  /** Stored Mesh resources, meshes that hold at least one resource, and "default". */
  meshes(): string[] {
    const names = new Set(["default", ...(this.globalByKind.get("Mesh")?.keys() ?? [])]);
    for (const m of this.byKind.values()) for (const r of m.values()) names.add(r.mesh);
    return [...names].sort(cmp);
  }

  /**
   * Creates or replaces a resource (creationTime kept, modificationTime set). Resolves once the file is
   * durable; the in-memory view changes only after that, so readers never see an unpersisted resource.
   */
  put(type: ResourceType, resource: Resource, now = new Date()): Promise<{ created: boolean; resource: Resource }> {
    return this.tracked(type.kind, resource.mesh, resource.name, () => this.write(type, resource, now));
  }

  /** True while a put, update or delete of this resource is queued or running (its stored version may still change). */
  hasPendingWrite(kind: string, mesh: string, name: string): boolean {
    return this.pendingWrites.has(`${kind}/${mesh}/${name}`);
  }

  /**
   * Read-modify-write in the write queue: `change` sees the current resource (after every earlier queued
   * write) and returns the replacement, or undefined to leave it. Resolves to the resource now stored.
   */
  update(type: ResourceType, mesh: string, name: string, change: (current: Resource) => Resource | undefined): Promise<Resource | undefined> {
    return this.tracked(type.kind, mesh, name, async () => {
      const current = this.get(type.kind, mesh, name);
      if (!current) return undefined;
      const next = change(current);
      return next ? (await this.write(type, next, new Date())).resource : current;
    });
  }

  private async write(type: ResourceType, resource: Resource, now: Date): Promise<{ created: boolean; resource: Resource }> {
    const index = this.byKind.get(type.kind)!;
    const result = await persist(index, `${resource.mesh}/${resource.name}`, this.pathOf(type, resource.mesh, resource.name), { ...resource, type: type.kind }, now);
    this.committed({ kind: type.kind, mesh: resource.mesh, name: resource.name, op: "put" });
    return result;
  }

  /** Deletes a resource; resolves false when it did not exist. */
  delete(type: ResourceType, mesh: string, name: string): Promise<boolean> {
    return this.tracked(type.kind, mesh, name, async () => {
      if (!(await unpersist(this.byKind.get(type.kind)!, `${mesh}/${name}`, this.pathOf(type, mesh, name)))) return false;
      this.committed({ kind: type.kind, mesh, name, op: "delete" });
      return true;
    });
  }

  /** Global resources of a kind, sorted by name. */
  listGlobal(kind: string): GlobalResource[] {
    return [...(this.globalByKind.get(kind)?.values() ?? [])].sort((a, b) => cmp(a.name, b.name));
  }

  getGlobal(kind: string, name: string): GlobalResource | undefined {
    return this.globalByKind.get(kind)?.get(name);
  }

  /** put() for a global type: same queue, same durability, file at DATA_DIR/<plural>/<name>.yaml. */
  putGlobal(type: ResourceType, resource: GlobalResource, now = new Date()): Promise<{ created: boolean; resource: GlobalResource }> {
    return this.serialised(async () => {
      const result = await persist(this.globalByKind.get(type.kind)!, resource.name, this.globalPathOf(type, resource.name), { ...resource, type: type.kind }, now);
      this.committed({ kind: type.kind, name: resource.name, op: "put" });
      return result;
    });
  }

  /** delete() for a global type; resolves false when it did not exist. */
  deleteGlobal(type: ResourceType, name: string): Promise<boolean> {
    return this.serialised(async () => {
      if (!(await unpersist(this.globalByKind.get(type.kind)!, name, this.globalPathOf(type, name)))) return false;
      this.committed({ kind: type.kind, name, op: "delete" });
      return true;
    });
  }

  /** Waits for every queued write to finish (used on shutdown). */
  async flush(): Promise<void> {
    await this.queue.catch(() => {});
  }

  private committed(change: StoreChange): void {
    this.revisionValue++;
    this.emit("change", change);
  }

  /** serialised(), counting the write as pending for its resource until it has run. */
  private tracked<T>(kind: string, mesh: string, name: string, fn: () => Promise<T>): Promise<T> {
    const key = `${kind}/${mesh}/${name}`;
    this.pendingWrites.set(key, (this.pendingWrites.get(key) ?? 0) + 1);
    const done = () => {
      const left = this.pendingWrites.get(key)! - 1;
      if (left === 0) this.pendingWrites.delete(key);
      else this.pendingWrites.set(key, left);
    };
    const run = this.serialised(fn);
    run.then(done, done);
    return run;
  }

  /** One write at a time: simple, and enough for a control plane's write rate; also orders PUT/DELETE races. */
  private serialised<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => {});
    return run;
  }

  private pathOf(type: ResourceType, mesh: string, name: string): string {
    return join(this.dataDir, "meshes", mesh, type.plural, `${name}.yaml`);
  }

  private globalPathOf(type: ResourceType, name: string): string {
    return join(this.dataDir, type.plural, `${name}.yaml`);
  }

  private async load(): Promise<void> {
    const meshesDir = join(this.dataDir, "meshes");
    for (const entry of await readdir(meshesDir, { withFileTypes: true })) {
      const mesh = entry.name;
      if (!entry.isDirectory() || !isResourceName(mesh)) continue; // meshes/<name>.yaml files are the Mesh resources
      for (const type of ALL_TYPES) {
        await this.loadDir(type, mesh, join(meshesDir, mesh, type.plural), this.byKind.get(type.kind)! as Map<string, GlobalResource>);
      }
    }
    for (const type of GLOBAL_TYPES) await this.loadDir(type, undefined, join(this.dataDir, type.plural), this.globalByKind.get(type.kind)!);
    const count = [...this.byKind.values(), ...this.globalByKind.values()].reduce((n, m) => n + m.size, 0);
    this.log.info({ dataDir: this.dataDir, resources: count }, "control-plane store loaded");
  }

  /** Loads every file of one type's directory; `mesh` undefined means a global type (its files carry no mesh). */
  private async loadDir(type: ResourceType, mesh: string | undefined, dir: string, index: Map<string, GlobalResource>): Promise<void> {
    const files = await readdir(dir).catch(() => [] as string[]);
    for (const file of files) await this.loadFile(type, mesh, dir, file, index);
  }

  private async loadFile(type: ResourceType, mesh: string | undefined, dir: string, file: string, index: Map<string, GlobalResource>): Promise<void> {
    const path = join(dir, file);
    if (file.startsWith(TEMP_PREFIX)) {
      // Left by a write that was killed before its rename: the real file still holds the previous version.
      await unlink(path).catch(() => {});
      this.log.warn({ path }, "removed an unfinished write left by a crash");
      return;
    }
    if (!file.endsWith(".yaml")) return;
    const name = file.slice(0, -".yaml".length);
    try {
      const text = await readFile(path, "utf8");
      const tooComplex = yamlLimitViolation(text);
      if (tooComplex) throw new Error(`document ${tooComplex}`);
      const doc = parseYamlBounded(text, { maxAliasCount: 0 }) as Resource | null;
      if (!doc || typeof doc !== "object" || Array.isArray(doc)) throw new Error("not a YAML mapping");
      if (doc.type !== type.kind || doc.name !== name || doc.mesh !== mesh) {
        throw new Error(`type/mesh/name must be ${type.kind}/${mesh ?? "(none)"}/${name} to live at this path`);
      }
      index.set(mesh === undefined ? name : `${mesh}/${name}`, doc);
    } catch (err) {
      this.log.error({ path, err: (err as Error).message }, "skipped an unreadable resource file");
    }
  }
}

/** Stamps and durably writes one resource, then (only then) indexes it. Runs inside the write queue. */
async function persist<T extends GlobalResource>(index: Map<string, T>, key: string, path: string, resource: T, now: Date): Promise<{ created: boolean; resource: T }> {
  const previous = index.get(key);
  const stamp = now.toISOString();
  const stored: T = { ...resource, creationTime: (previous?.creationTime as string | undefined) ?? stamp, modificationTime: stamp };
  await writeFileAtomic(path, FILE_HEADER + stringifyYaml(stored));
  index.set(key, stored);
  return { created: previous === undefined, resource: stored };
}

/** Durably removes one resource's file, then unindexes it; false when it was not there. Runs inside the write queue. */
async function unpersist(index: Map<string, unknown>, key: string, path: string): Promise<boolean> {
  if (!index.has(key)) return false;
  await removeFileDurable(path);
  index.delete(key);
  return true;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
