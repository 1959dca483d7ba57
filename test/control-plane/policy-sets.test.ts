// The per-dataplane policy-set index on its own (policy-sets.ts): what each set holds, which writes re-render and
// wake which sets, and the answers relative to the set a sidecar holds; driven through a real store and notifier.
import test from "ava";
import { EventEmitter } from "node:events";
import { silentLogger } from "../../extproc/log.js";
import { DATAPLANE_TYPE, IDENTITY_TYPES, MESH_TYPE, POLICY_TYPES, type Resource, SERVICE_TYPES } from "../../extproc/kuma-rest/resources.js";
import { DEFAULT_KUMA_VERSION } from "../../extproc/kuma-rest/kuma-version.js";
import { PolicySetIndex, type PolicySetView, policySetKey } from "../../extproc/control-plane/policy-sets.js";
import { ResourceStore, type StoreChange } from "../../extproc/control-plane/store.js";
import { ChangeNotifier, etagOf } from "../../extproc/control-plane/watch.js";
import { dataplane, meshIdentity, tempDir } from "./helpers.js";

type Teardown = { teardown(fn: () => Promise<void> | void): void };

const MTP = POLICY_TYPES.find((t) => t.kind === "MeshTrafficPermission")!;
const ROUTE = POLICY_TYPES.find((t) => t.kind === "MeshHTTPRoute")!;
const MESH_SERVICE = SERVICE_TYPES.find((t) => t.kind === "MeshService")!;
const MESH_IDENTITY = IDENTITY_TYPES.find((t) => t.kind === "MeshIdentity")!;
const MESH_TRUST = IDENTITY_TYPES.find((t) => t.kind === "MeshTrust")!;

/** A store on a fresh temp dir, its notifier and the index over them, as the control plane wires them. */
async function indexFor(t: Teardown) {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  const store = await ResourceStore.open(dir.path, silentLogger());
  const notifier = new ChangeNotifier();
  store.on("change", (change) => notifier.notify(change.kind, change.mesh));
  const index = new PolicySetIndex(store, notifier, DEFAULT_KUMA_VERSION);
  /** From now on, how often each set named ("mesh/name") is woken: call the result to read the counts. */
  const wakesOf = (...ids: string[]) => {
    const key = (id: string) => policySetKey(id.slice(0, id.indexOf("/")), id.slice(id.indexOf("/") + 1));
    const base = ids.map((id) => notifier.version(key(id)));
    return () => ids.map((id, i) => notifier.version(key(id)) - base[i]!);
  };
  return { store, notifier, index, wakesOf, dir };
}

/** A MeshTrafficPermission on `service` (or the whole mesh), letting everyone `action`. */
const permission = (name: string, service: string | undefined, action: "Allow" | "Deny" = "Deny", mesh = "default"): Resource =>
  ({
    type: "MeshTrafficPermission",
    mesh,
    name,
    spec: { targetRef: service ? { kind: "MeshService", name: service } : { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action } }] },
  }) as Resource;

/** A MeshTrafficPermission the engine rejects (an action it does not know). */
const broken = (name: string, mesh = "default"): Resource =>
  ({ type: "MeshTrafficPermission", mesh, name, spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Maybe" } }] } }) as Resource;

const route = (name: string, service: string): Resource =>
  ({
    type: "MeshHTTPRoute",
    mesh: "default",
    name,
    spec: { targetRef: { kind: "MeshService", name: service }, to: [{ targetRef: { kind: "MeshService", name: "svc-b" }, rules: [{ matches: [{ path: { type: "PathPrefix", value: "/" } }], default: {} }] }] },
  }) as Resource;

const dp = (name: string, service: string, mesh = "default") => dataplane(name, service, mesh) as unknown as Resource;

interface SetBody {
  dataplane: { name: string; mesh: string; status?: unknown };
  total: number;
  items: Array<{ type: string; name: string; spec?: any }>;
}
const bodyOf = (view: PolicySetView | undefined): SetBody => JSON.parse(view!.bytes.toString());
const namesOf = (view: PolicySetView | undefined) => bodyOf(view).items.map((i) => `${i.type}/${i.name}`);

test("policy-set index › the notifier key of a set is _policy-set/{mesh}/{name}, so its waiters count under _policy-set", (t) => {
  t.is(policySetKey("default", "a"), "_policy-set/default/a");
  const notifier = new ChangeNotifier();
  void notifier.wait(policySetKey("default", "a"), 60_000, new Promise<void>(() => {}));
  t.is(notifier.waitersByKind().get("_policy-set"), 1);
  notifier.close();
});

test("policy-set index › given no Dataplane, or one the engine cannot read, when its set is asked, then there is none", async (t) => {
  const { store, index } = await indexFor(t);
  t.is(index.view("default", "nobody"), undefined);
  await store.put(DATAPLANE_TYPE, { type: "Dataplane", mesh: "default", name: "odd" } as Resource);
  t.is(index.view("default", "odd"), undefined);
  t.is(index.renders, 0);
});

test("policy-set index › given policies, resources and a Dataplane, when its set is asked, then the selecting policies, then the services, identities and Mesh, as pretty JSON under the ETag of those items", async (t) => {
  const { store, index } = await indexFor(t);
  await store.put(DATAPLANE_TYPE, { ...dp("a", "svc-a"), status: { online: true } } as Resource);
  for (const p of [permission("on-a", "svc-a"), permission("on-b", "svc-b"), permission("all", undefined, "Allow")]) await store.put(MTP, p);
  await store.put(MESH_SERVICE, { type: "MeshService", mesh: "default", name: "svc-a", spec: { selector: { dataplaneTags: { "kuma.io/service": "svc-a" } }, ports: [{ port: 8080 }] } } as Resource);
  await store.put(MESH_TRUST, { type: "MeshTrust", mesh: "default", name: "trust", spec: { caBundles: [{ type: "Pem", pem: { value: "x" } }], trustDomain: "default.zone-1.mesh.local" } } as Resource);
  await store.putGlobal(MESH_TYPE, { type: "Mesh", name: "default" } as never);
  const view = index.view("default", "a");
  const body = bodyOf(view);
  // then the stored Dataplane without its status, the count of the mesh's policies, and the items in order
  t.is(body.dataplane.name, "a");
  t.false("status" in body.dataplane);
  t.is(body.total, 3);
  t.deepEqual(namesOf(view), ["MeshTrafficPermission/all", "MeshTrafficPermission/on-a", "MeshService/svc-a", "MeshTrust/trust", "Mesh/default"]);
  t.is(view!.bytes.toString(), JSON.stringify(body, null, 2) + "\n");
  t.is(view!.etag, etagOf(body.items));
  // and no answer relative to an earlier set: this is the first
  t.is(view!.previous, undefined);
  t.is(view!.delta, undefined);
  // and asking again, nothing having changed, selects nothing again
  t.is(index.view("default", "a"), view);
  t.is(index.renders, 1);
});

test("policy-set index › given a stored policy the engine rejects, when sets are asked, then it is in every set and counted in the total", async (t) => {
  const { store, index } = await indexFor(t);
  for (const [name, svc] of [["a", "svc-a"], ["b", "svc-b"]]) await store.put(DATAPLANE_TYPE, dp(name!, svc!));
  await store.put(MTP, permission("on-a", "svc-a"));
  await store.put(MTP, broken("bad"));
  t.deepEqual(namesOf(index.view("default", "a")), ["MeshTrafficPermission/on-a", "MeshTrafficPermission/bad"]);
  t.deepEqual(namesOf(index.view("default", "b")), ["MeshTrafficPermission/bad"]);
  t.is(bodyOf(index.view("default", "b")).total, 2);
});

test("policy-set index › given MeshIdentities and MeshTrusts, when a set is asked, then the identities selecting its labels, one the engine cannot read, and every trust", async (t) => {
  const { store, index } = await indexFor(t);
  await store.put(DATAPLANE_TYPE, { ...dp("a", "svc-a"), labels: { team: "pay" } } as Resource);
  await store.put(MESH_IDENTITY, meshIdentity("pay", { team: "pay" }) as unknown as Resource);
  await store.put(MESH_IDENTITY, meshIdentity("ops", { team: "ops" }) as unknown as Resource);
  await store.put(MESH_IDENTITY, { type: "MeshIdentity", mesh: "default", name: "unreadable", spec: { selector: 7 } } as Resource);
  await store.put(MESH_TRUST, { type: "MeshTrust", mesh: "default", name: "t", spec: {} } as Resource);
  t.deepEqual(namesOf(index.view("default", "a")), ["MeshIdentity/pay", "MeshIdentity/unreadable", "MeshTrust/t"]);
});

test("policy-set index › given rendered sets, when a policy selecting A is created, edited and deleted, then only A's set follows and is woken, the new policy last and an edited one in its place", async (t) => {
  const { store, index, wakesOf } = await indexFor(t);
  for (const [name, svc] of [["a", "svc-a"], ["b", "svc-b"]]) await store.put(DATAPLANE_TYPE, dp(name!, svc!));
  await store.put(MTP, permission("all", undefined));
  await store.put(MTP, permission("z-on-a", "svc-a"));
  const b = index.view("default", "b");
  t.deepEqual(namesOf(index.view("default", "a")), ["MeshTrafficPermission/all", "MeshTrafficPermission/z-on-a"]);
  const renders = index.renders;
  const woken = wakesOf("default/a", "default/b");
  // when a policy selecting A is created: A's set has it last (where a fresh selection sorts it first)
  await store.put(MTP, permission("a-first", "svc-a"));
  t.deepEqual(namesOf(index.view("default", "a")), ["MeshTrafficPermission/all", "MeshTrafficPermission/z-on-a", "MeshTrafficPermission/a-first"]);
  t.deepEqual(woken(), [1, 0]);
  t.is(index.renders, renders + 1);
  // and B's set is the one it had, its total left as rendered (its ETag did not move)
  t.is(index.view("default", "b"), b);
  // when the first one is edited, it keeps its place with its new content
  await store.put(MTP, permission("all", undefined, "Allow"));
  const edited = bodyOf(index.view("default", "a"));
  t.deepEqual(edited.items.map((i) => i.name), ["all", "z-on-a", "a-first"]);
  t.is(edited.items[0]!.spec.from[0].default.action, "Allow");
  t.is(edited.total, 3);
  t.deepEqual(woken(), [2, 1], "the mesh-wide policy selects B too");
  t.is(bodyOf(index.view("default", "b")).items[0]!.spec.from[0].default.action, "Allow");
  // when a policy A had is deleted, it leaves A's set and wakes it
  await store.delete(MTP, "default", "z-on-a");
  t.deepEqual(namesOf(index.view("default", "a")), ["MeshTrafficPermission/all", "MeshTrafficPermission/a-first"]);
  t.deepEqual(woken(), [3, 1]);
});

test("policy-set index › given a policy in A's set, when it is edited to select B instead, then it leaves A's set and joins B's, both woken", async (t) => {
  const { store, index, wakesOf } = await indexFor(t);
  for (const [name, svc] of [["a", "svc-a"], ["b", "svc-b"]]) await store.put(DATAPLANE_TYPE, dp(name!, svc!));
  await store.put(MTP, permission("p", "svc-a"));
  index.view("default", "a");
  index.view("default", "b");
  const woken = wakesOf("default/a", "default/b");
  await store.put(MTP, permission("p", "svc-b"));
  t.deepEqual(namesOf(index.view("default", "a")), []);
  t.deepEqual(namesOf(index.view("default", "b")), ["MeshTrafficPermission/p"]);
  t.deepEqual(woken(), [1, 1]);
  // and edited twice more, it stays once in B's set, and A (which it left) is not woken again
  await store.put(MTP, permission("p", "svc-b", "Allow"));
  await store.put(MTP, permission("p", "svc-b"));
  t.deepEqual(namesOf(index.view("default", "b")), ["MeshTrafficPermission/p"]);
  t.deepEqual(woken(), [1, 3]);
});

test("policy-set index › given two Dataplanes of one service, when a policy is added after one of them was asked, then both list their policies in the same order", async (t) => {
  const { store, index } = await indexFor(t);
  for (const name of ["a", "b"]) await store.put(DATAPLANE_TYPE, dp(name, "svc-a"));
  await store.put(MTP, permission("z-on-a", "svc-a"));
  index.view("default", "a");
  await store.put(MTP, permission("a-first", "svc-a"));
  t.deepEqual(namesOf(index.view("default", "b")), namesOf(index.view("default", "a")));
});

test("policy-set index › given rendered sets, when a policy selecting neither is written, then no set is woken or rendered again", async (t) => {
  const { store, index, wakesOf } = await indexFor(t);
  await store.put(DATAPLANE_TYPE, dp("a", "svc-a"));
  const a = index.view("default", "a");
  const renders = index.renders;
  const woken = wakesOf("default/a");
  await store.put(MTP, permission("on-c", "svc-c"));
  await store.delete(MTP, "default", "on-c");
  t.deepEqual(woken(), [0]);
  t.is(index.renders, renders);
  t.is(index.view("default", "a"), a);
});

test("policy-set index › given rendered sets, when a version the engine rejects replaces a policy, then it goes to every set, each woken", async (t) => {
  const { store, index, wakesOf } = await indexFor(t);
  for (const [name, svc] of [["a", "svc-a"], ["b", "svc-b"]]) await store.put(DATAPLANE_TYPE, dp(name!, svc!));
  await store.put(MTP, permission("on-a", "svc-a"));
  index.view("default", "a");
  index.view("default", "b");
  const woken = wakesOf("default/a", "default/b");
  await store.put(MTP, broken("on-a"));
  t.deepEqual(namesOf(index.view("default", "a")), ["MeshTrafficPermission/on-a"]);
  t.deepEqual(namesOf(index.view("default", "b")), ["MeshTrafficPermission/on-a"]);
  t.is(bodyOf(index.view("default", "b")).items[0]!.spec.from[0].default.action, "Maybe");
  t.deepEqual(woken(), [1, 1]);
});

test("policy-set index › given sets in meshes a and ab, when a mesh-wide policy is written in a, then only a's set is woken", async (t) => {
  const { store, index, wakesOf } = await indexFor(t);
  await store.put(DATAPLANE_TYPE, dp("x", "svc", "a"));
  await store.put(DATAPLANE_TYPE, dp("x", "svc", "ab"));
  index.view("a", "x");
  const other = index.view("ab", "x");
  const woken = wakesOf("a/x", "ab/x");
  await store.put(MTP, permission("all", undefined, "Deny", "a"));
  t.deepEqual(woken(), [1, 0]);
  t.deepEqual(namesOf(index.view("a", "x")), ["MeshTrafficPermission/all"]);
  t.is(index.view("ab", "x"), other);
  // and a version the engine rejects, which goes to every set of a, goes to none of ab
  await store.put(MTP, broken("bad", "a"));
  t.deepEqual(woken(), [2, 0]);
  t.deepEqual(namesOf(index.view("a", "x")), ["MeshTrafficPermission/all", "MeshTrafficPermission/bad"]);
  t.is(index.view("ab", "x"), other);
  // and a route written in a selects a's sets again, not ab's
  await store.put(ROUTE, { ...route("r", "svc"), mesh: "a" } as Resource);
  t.deepEqual(woken(), [3, 0]);
  t.is(index.view("ab", "x"), other);
  index.view("a", "x");
  // and a's Mesh re-renders a's sets, not ab's
  await store.putGlobal(MESH_TYPE, { type: "Mesh", name: "a" } as never);
  t.deepEqual(woken(), [4, 0]);
  t.is(index.view("ab", "x"), other);
});

test("policy-set index › given a set of one mesh, when a policy is written in a mesh whose sets nobody asked for, then it is stored and shows in that mesh's sets later", async (t) => {
  const { store, index } = await indexFor(t);
  await store.put(DATAPLANE_TYPE, dp("a", "svc-a"));
  await store.put(DATAPLANE_TYPE, dp("x", "svc-a", "other"));
  index.view("default", "a");
  await store.put(MTP, permission("all", undefined, "Deny", "other"));
  t.deepEqual(namesOf(index.view("other", "x")), ["MeshTrafficPermission/all"]);
});

test("policy-set index › given rendered sets, when a MeshHTTPRoute is written, then every set of the mesh is selected again, relative to the set it replaced", async (t) => {
  const { store, index, wakesOf } = await indexFor(t);
  for (const [name, svc] of [["a", "svc-a"], ["b", "svc-b"]]) await store.put(DATAPLANE_TYPE, dp(name!, svc!));
  await store.put(DATAPLANE_TYPE, dp("x", "svc-a", "other"));
  await store.put(MTP, permission("on-a", "svc-a"));
  const before = index.view("default", "a")!;
  index.view("default", "b");
  const elsewhere = index.view("other", "x");
  const renders = index.renders;
  const woken = wakesOf("default/a", "default/b", "other/x");
  await store.put(ROUTE, route("r", "svc-a"));
  t.deepEqual(woken(), [1, 1, 0]);
  t.is(index.renders, renders, "selected again when next asked, not at the write");
  const after = index.view("default", "a")!;
  t.deepEqual(namesOf(after), ["MeshTrafficPermission/on-a", "MeshHTTPRoute/r"]);
  t.is(after.previous?.etag, before.etag);
  t.deepEqual(namesOf(index.view("default", "b")), []);
  t.is(index.renders, renders + 2);
  t.is(index.view("other", "x"), elsewhere);
});

test("policy-set index › given rendered sets, when the Mesh or a service of the mesh is written, then each set of that mesh is woken and re-rendered with it, not another mesh's", async (t) => {
  const { store, index, wakesOf } = await indexFor(t);
  await store.put(DATAPLANE_TYPE, dp("a", "svc-a"));
  await store.put(DATAPLANE_TYPE, dp("x", "svc-a", "other"));
  await store.put(MTP, permission("on-a", "svc-a"));
  const first = index.view("default", "a")!;
  const elsewhere = index.view("other", "x");
  const woken = wakesOf("default/a", "other/x");
  await store.putGlobal(MESH_TYPE, { type: "Mesh", name: "default" } as never);
  t.deepEqual(woken(), [1, 0]);
  const withMesh = index.view("default", "a")!;
  t.deepEqual(namesOf(withMesh), ["MeshTrafficPermission/on-a", "Mesh/default"]);
  // re-rendered from the policies it had: no selection needed, and relative to the set it replaced
  t.is(withMesh.previous?.etag, first.etag);
  t.is(index.view("other", "x"), elsewhere);
  await store.put(MESH_SERVICE, { type: "MeshService", mesh: "default", name: "svc-a", spec: {} } as Resource);
  t.deepEqual(woken(), [2, 0]);
  t.deepEqual(namesOf(index.view("default", "a")), ["MeshTrafficPermission/on-a", "MeshService/svc-a", "Mesh/default"]);
  await store.put(MESH_IDENTITY, meshIdentity("all", {}) as unknown as Resource);
  t.deepEqual(woken(), [3, 0]);
});

test("policy-set index › given a set, when its Dataplane is stored again with only its status changed, then the set stays; other tags select it again, and deleting it leaves no set", async (t) => {
  const { store, index, wakesOf } = await indexFor(t);
  await store.put(DATAPLANE_TYPE, dp("a", "svc-a"));
  for (const p of [permission("on-a", "svc-a"), permission("on-b", "svc-b")]) await store.put(MTP, p);
  const first = index.view("default", "a")!;
  const woken = wakesOf("default/a");
  await store.put(DATAPLANE_TYPE, { ...dp("a", "svc-a"), status: { draining: true } } as Resource);
  t.deepEqual(woken(), [0]);
  t.is(index.view("default", "a"), first);
  // when it comes back as svc-b, it is woken and selected again, relative to the set it had
  await store.put(DATAPLANE_TYPE, dp("a", "svc-b"));
  t.deepEqual(woken(), [1]);
  const again = index.view("default", "a")!;
  t.deepEqual(namesOf(again), ["MeshTrafficPermission/on-b"]);
  t.is(again.previous?.etag, first.etag);
  await store.delete(DATAPLANE_TYPE, "default", "a");
  t.deepEqual(woken(), [2]);
  t.is(index.view("default", "a"), undefined);
});

test("policy-set index › given a Dataplane not asked for yet, when it is stored again, then its set is woken and the first one asked has no earlier base", async (t) => {
  const { store, index, wakesOf } = await indexFor(t);
  const woken = wakesOf("default/a");
  await store.put(DATAPLANE_TYPE, dp("a", "svc-a"));
  t.deepEqual(woken(), [1]);
  const view = index.view("default", "a")!;
  t.is(view.previous, undefined);
});

test("policy-set index › given a Dataplane whose set a route change let go, when the Dataplane is deleted, then its set is woken and there is none", async (t) => {
  const { store, index, wakesOf } = await indexFor(t);
  await store.put(DATAPLANE_TYPE, dp("a", "svc-a"));
  index.view("default", "a");
  await store.put(ROUTE, route("r", "svc-a"));
  const woken = wakesOf("default/a");
  await store.delete(DATAPLANE_TYPE, "default", "a");
  t.deepEqual(woken(), [1]);
  t.is(index.view("default", "a"), undefined);
});

test("policy-set index › given a set that replaced another, when the change alone is asked, then compact JSON with the new items in full and the kept ones by key, the same bytes each time", async (t) => {
  const { store, index } = await indexFor(t);
  await store.put(DATAPLANE_TYPE, dp("a", "svc-a"));
  for (const p of [permission("all", undefined), permission("on-a", "svc-a")]) await store.put(MTP, p);
  await store.putGlobal(MESH_TYPE, { type: "Mesh", name: "default" } as never);
  const first = index.view("default", "a")!;
  await store.put(MTP, permission("on-a", "svc-a", "Allow"));
  const next = index.view("default", "a")!;
  t.is(next.previous?.etag, first.etag);
  const delta = next.delta!();
  const full = bodyOf(next);
  t.is(delta.toString(), JSON.stringify({ dataplane: full.dataplane, total: 2, items: ["MeshTrafficPermission/all", full.items[1], "Mesh/default"] }) + "\n");
  // and a policy selecting nobody written meanwhile changes neither the set nor its answer
  await store.put(MTP, permission("on-c", "svc-c"));
  t.is(index.view("default", "a"), next);
  t.is(next.delta!().toString(), delta.toString());
});

test("policy-set index › given a set that replaced another, when a write re-renders it to the same ETag, then its answers stay relative to the older set", async (t) => {
  const { store, index } = await indexFor(t);
  await store.put(DATAPLANE_TYPE, { ...dp("a", "svc-a"), labels: { team: "pay" } } as Resource);
  await store.put(MTP, permission("on-a", "svc-a"));
  const first = index.view("default", "a")!;
  await store.put(MTP, permission("on-a", "svc-a", "Allow"));
  const second = index.view("default", "a")!;
  // when a MeshIdentity selecting other Dataplanes is stored (the mesh's resources changed, not this set)
  await store.put(MESH_IDENTITY, meshIdentity("ops", { team: "ops" }) as unknown as Resource);
  const third = index.view("default", "a")!;
  t.not(third, second);
  t.is(third.etag, second.etag);
  t.is(third.previous?.etag, first.etag);
  t.is(third.delta!().toString(), second.delta!().toString());
});

/** The part of the store the index reads, in memory (a real store would write 4 097 files first). */
class MemoryStore extends EventEmitter<{ change: [StoreChange] }> {
  /** kind → mesh/name (global: /name) → resource. */
  private readonly byKind = new Map<string, Map<string, Resource>>();
  private of(kind: string): Map<string, Resource> {
    if (!this.byKind.has(kind)) this.byKind.set(kind, new Map());
    return this.byKind.get(kind)!;
  }
  get(kind: string, mesh: string, name: string): Resource | undefined {
    return this.of(kind).get(`${mesh}/${name}`);
  }
  getGlobal(kind: string, name: string): Resource | undefined {
    return this.of(kind).get(`/${name}`);
  }
  list(kind: string, mesh: string): Resource[] {
    return [...this.of(kind).values()].filter((r) => r.mesh === mesh);
  }
  put(resource: Resource, global = false): void {
    this.of(resource.type).set(`${global ? "" : resource.mesh}/${resource.name}`, resource);
    this.emit("change", { kind: resource.type, ...(global ? {} : { mesh: resource.mesh }), name: resource.name, op: "put" });
  }
}

test("policy-set index › given more Dataplanes than the 4 096 sets kept, when each is asked, then the oldest set is let go and rendered again, a replaced one keeps its base, and only the 4 096 newest bases are kept", (t) => {
  const store = new MemoryStore();
  const index = new PolicySetIndex(store as unknown as ResourceStore, new ChangeNotifier(), DEFAULT_KUMA_VERSION);
  const count = 4097;
  for (let i = 0; i < count; i++) store.put(dp(`dp-${i}`, `svc-${i}`));
  const view = (i: number) => index.view("default", `dp-${i}`)!;
  for (let i = 0; i < count; i++) view(i);
  t.is(index.renders, count);
  // then the newest is kept, the oldest (dp-0) was let go and is rendered again
  view(count - 1);
  t.is(index.renders, count);
  view(0);
  t.is(index.renders, count + 1);
  // when the Mesh is stored every kept set is re-rendered in its place: none is let go for it, so each keeps its base
  store.put({ type: "Mesh", name: "default" } as Resource, true);
  view(0);
  t.truthy(view(2).previous, "dp-2 (now the oldest kept) was re-rendered from its kept set");
  // when a route selects every set again, each base is kept, up to 4 096 of them
  store.put(route("r", "svc-a"));
  view(1);
  store.put(route("r", "svc-b"));
  t.truthy(view(3).previous, "dp-3's base is kept");
  t.is(view(2).previous, undefined, "dp-2's base, the oldest, was let go for dp-1's");
});

test("policy-set index › given a route of A's service, when a policy naming that route is written, then it joins A's set, not B's", async (t) => {
  const { store, index, wakesOf } = await indexFor(t);
  for (const [name, svc] of [["a", "svc-a"], ["b", "svc-b"]]) await store.put(DATAPLANE_TYPE, dp(name!, svc!));
  await store.put(ROUTE, route("r", "svc-a"));
  index.view("default", "a");
  const b = index.view("default", "b");
  const woken = wakesOf("default/a", "default/b");
  const limit = { type: "MeshRateLimit", mesh: "default", name: "on-r", spec: { targetRef: { kind: "MeshHTTPRoute", name: "r" }, to: [{ targetRef: { kind: "Mesh" }, default: { local: { http: { requestRate: { num: 1, interval: "1s" } } } } }] } };
  await store.put(POLICY_TYPES.find((t) => t.kind === "MeshRateLimit")!, limit as unknown as Resource);
  t.deepEqual(woken(), [1, 0]);
  t.deepEqual(namesOf(index.view("default", "a")), ["MeshHTTPRoute/r", "MeshRateLimit/on-r"]);
  t.is(index.view("default", "b"), b);
});
