// The sidecar's reader of its own policy set, answer by answer: whether the control plane offers it (GET /), the
// checks on each answer (status, ETag, body, the Dataplane it holds read as ours), the long-poll's outcomes and
// reuse of item objects served with the same text. Scripted HTTP server on a real socket.
import test from "ava";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { KumaClient, SyncError, syncBudget } from "../../extproc/policy-source/kuma-client.js";
import { PolicySetReader } from "../../extproc/policy-source/http-policy-set.js";
import { dataplaneFromObject } from "../../extproc/policy/documents/dataplane.js";
import type { Logger } from "../../extproc/log.js";

const dpDoc = (over: Record<string, unknown> = {}) => ({
  type: "Dataplane",
  mesh: "default",
  name: "a",
  labels: { app: "a", team: "t", zone: "z1" },
  networking: { address: "127.0.0.1", inbound: [{ port: 8080, tags: { "kuma.io/service": "svc-a", version: "v1" } }] },
  ...over,
});
const mtp = (name: string, action = "Allow") => ({ type: "MeshTrafficPermission", mesh: "default", name, spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action } }] } });

interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** Raw body text; JSON.stringify(json) when absent. */
  text?: string;
  json?: unknown;
}

const setReply = (etag: string, items: unknown[], dataplane: unknown = dpDoc()): Reply => ({ headers: { etag }, json: { dataplane, total: items.length, items } });

/** GET / answers `root`; each other request the next of `replies` (304 when none is left). Records requests. */
async function controlPlane(t: { teardown(f: () => void): void }, root: Reply, replies: Reply[], opts: { registered?: Record<string, unknown>; engineDoc?: Record<string, unknown>; requestTimeoutMs?: number } = {}) {
  const requests: Array<{ path: string; ifNoneMatch?: string; delta?: string }> = [];
  const send = (res: import("node:http").ServerResponse, r: Reply) =>
    void res.writeHead(r.status ?? 200, { "content-type": "application/json", ...(r.headers ?? {}) }).end(r.text ?? JSON.stringify(r.json));
  const server = createServer((req: IncomingMessage, res) => {
    const path = req.url ?? "/";
    requests.push({ path, ifNoneMatch: req.headers["if-none-match"] as string | undefined, delta: req.headers["x-meshext-policy-set-delta"] as string | undefined });
    if (path === "/") return send(res, root);
    const r = replies.shift();
    if (!r) return void res.writeHead(304).end();
    send(res, r);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dp = dataplaneFromObject(opts.engineDoc ?? dpDoc()).dataplane!;
  const infos: string[] = [];
  const warns: string[] = [];
  const log = { info: (m: string) => infos.push(m), warn: (m: string) => warns.push(m), debug: () => {}, error: () => {} } as unknown as Logger;
  const reader = new PolicySetReader(new KumaClient({ baseUrl, mesh: "default", maxListBytes: 1 << 20 }), {
    baseUrl,
    mesh: "default",
    dataplane: () => dp,
    log,
    ...(opts.registered ? { registered: () => opts.registered! } : {}),
    ...(opts.requestTimeoutMs ? { requestTimeoutMs: opts.requestTimeoutMs } : {}),
  });
  return { reader, requests, infos, warns, setRequests: () => requests.filter((r) => r.path !== "/") };
}

const OFFERED: Reply = { json: { features: ["dataplane-policy-set"] } };
const sig = () => new AbortController().signal;
const budget = () => syncBudget(1 << 20);
const fails = async (p: Promise<unknown>) => p.then(() => undefined, (err: unknown) => err);

test("policy set reader › offered: the set is read, logged once, and the reader is pending until then", async (t) => {
  const { reader, infos, setRequests } = await controlPlane(t, OFFERED, [setReply('"e1"', [mtp("p1")]), setReply('"e2"', [mtp("p1")])]);
  // given nothing read yet, then it is not pending
  t.false(reader.pending);
  // when read twice
  const set = await reader.read(sig(), budget());
  await reader.read(sig(), budget());
  // then the set and its ETag, from the dataplane's own path
  t.deepEqual(set, { items: [mtp("p1")], etag: '"e1"' });
  t.is(setRequests()[0]!.path, "/meshes/default/dataplanes/a/_policy-set");
  t.true(reader.pending);
  t.is(infos.length, 1);
  t.regex(infos[0]!, /own policy set/);
});

test("policy set reader › not offered: the full lists are read and the set endpoint never asked", async (t) => {
  const cases: Array<[string, Reply]> = [
    ["other features", { json: { features: ["other"] } }],
    ["features as a string", { json: { features: "dataplane-policy-set" } }],
    ["a null root", { text: "null" }],
    ["a root that is no JSON", { text: "<html>" }],
    ["a root answered 404 even if it lists the feature", { status: 404, json: { features: ["dataplane-policy-set"] } }],
    ["a root larger than 1 MiB even if it lists the feature", { json: { features: ["dataplane-policy-set"], padding: "x".repeat(1 << 20) } }],
  ];
  for (const [what, root] of cases) {
    const { reader, setRequests, infos } = await controlPlane(t, root, [setReply('"e1"', [mtp("p1")])]);
    t.is(await reader.read(sig(), budget()).catch((e: unknown) => e), undefined, what);
    t.is(setRequests().length, 0, what);
    t.false(reader.pending, what);
    t.deepEqual(infos, [], what);
  }
});

test("policy set reader › answers that are no set are refused as bad responses or by status", async (t) => {
  const cases: Array<[string, Reply, SyncError["reason"], RegExp]> = [
    ["500 with a set body", { ...setReply('"e1"', [mtp("p1")]), status: 500 }, "server_error", /GET \/meshes\/default\/dataplanes\/a\/_policy-set/],
    ["no ETag", { json: { dataplane: dpDoc(), items: [mtp("p1")] } }, "bad_response", /_policy-set: expected \{dataplane, items\} with an ETag/],
    ["items not a list", { headers: { etag: '"e1"' }, json: { dataplane: dpDoc(), items: 5 } }, "bad_response", /expected \{dataplane, items\}/],
    ["no items", { headers: { etag: '"e1"' }, json: { dataplane: dpDoc() } }, "bad_response", /expected \{dataplane, items\}/],
    ["a null body", { headers: { etag: '"e1"' }, text: "null" }, "bad_response", /expected \{dataplane, items\}/],
    ["a list body", { headers: { etag: '"e1"' }, text: "[]" }, "bad_response", /expected \{dataplane, items\}/],
    ["no JSON", { headers: { etag: '"e1"' }, text: '{"dataplane": nope, "items": []}' }, "bad_response", /_policy-set: could not read the policy set: /],
  ];
  for (const [what, reply, reason, message] of cases) {
    const { reader } = await controlPlane(t, OFFERED, [reply]);
    const err = await fails(reader.read(sig(), budget()));
    t.true(err instanceof SyncError, `${what}: ${String(err)}`);
    t.is((err as SyncError).reason, reason, what);
    t.regex((err as Error).message, message, what);
  }
});

test("policy set reader › a set larger than the budget is refused as the budget says", async (t) => {
  const { reader } = await controlPlane(t, OFFERED, [setReply('"e1"', [mtp("p1"), mtp("p2")])]);
  const err = await fails(reader.read(sig(), syncBudget(64)));
  t.true(err instanceof SyncError);
  t.is((err as SyncError).reason, "bad_response");
  t.regex((err as Error).message, /^\/meshes\/default\/dataplanes\/a\/_policy-set: list larger than 64 bytes/);
});

test("policy set reader › a Dataplane gone (404) means the full lists", async (t) => {
  const { reader } = await controlPlane(t, OFFERED, [{ status: 404, json: {} }]);
  t.is(await reader.read(sig(), budget()), undefined);
});

test("policy set reader › the control plane's Dataplane must read as ours; labels and tags in any order", async (t) => {
  const reversed = dpDoc({
    labels: { zone: "z1", team: "t", app: "a" },
    networking: { address: "127.0.0.1", inbound: [{ port: 8080, tags: { version: "v1", "kuma.io/service": "svc-a" } }] },
  });
  const cases: Array<[string, unknown, boolean]> = [
    ["same", dpDoc(), true],
    ["labels and tags in another order", reversed, true],
    ["another label value", dpDoc({ labels: { app: "b", team: "t", zone: "z1" } }), false],
    ["another tag", dpDoc({ networking: { address: "127.0.0.1", inbound: [{ port: 8080, tags: { "kuma.io/service": "svc-b", version: "v1" } }] } }), false],
    ["another port", dpDoc({ networking: { address: "127.0.0.1", inbound: [{ port: 9090, tags: { "kuma.io/service": "svc-a", version: "v1" } }] } }), false],
    ["a named inbound", dpDoc({ networking: { address: "127.0.0.1", inbound: [{ name: "8080", port: 8080, tags: { "kuma.io/service": "svc-a", version: "v1" } }] } }), false],
    ["another name", dpDoc({ name: "b" }), false],
    ["no Dataplane", null, false],
  ];
  for (const [what, served, ours] of cases) {
    const { reader, warns } = await controlPlane(t, OFFERED, [setReply('"e1"', [mtp("p1")], served)]);
    const set = await reader.read(sig(), budget());
    t.is(set !== undefined, ours, what);
    t.is(warns.length, ours ? 0 : 1, what);
  }
});

test("policy set reader › a mismatch warns once until the Dataplane reads as ours again", async (t) => {
  const other = dpDoc({ labels: { app: "b" } });
  const { reader, warns } = await controlPlane(t, OFFERED, [setReply('"e1"', [], other), setReply('"e2"', [], other), setReply('"e3"', []), setReply('"e4"', [], other)]);
  t.is(await reader.read(sig(), budget()), undefined);
  t.is(await reader.read(sig(), budget()), undefined);
  t.is(warns.length, 1);
  t.regex(warns[0]!, /other tags, labels or inbounds/);
  t.truthy(await reader.read(sig(), budget()));
  t.is(await reader.read(sig(), budget()), undefined);
  t.is(warns.length, 2);
});

test("policy set reader › the Dataplane it registered is accepted as ours too, another one is not", async (t) => {
  const registered = dpDoc({ networking: { address: "127.0.0.1", inbound: [{ port: 1, tags: { "kuma.io/service": "svc-a", version: "v1" } }] } });
  const { reader } = await controlPlane(t, OFFERED, [setReply('"e1"', [mtp("p1")], registered), setReply('"e2"', [mtp("p1")], dpDoc({ name: "b" }))], { registered });
  t.truthy(await reader.read(sig(), budget()));
  t.is(await reader.read(sig(), budget()), undefined);
});

test("policy set reader › an item served with the same text as in the last full answer is the object read then", async (t) => {
  const { reader } = await controlPlane(t, OFFERED, [setReply('"e1"', [mtp("p1"), mtp("p2")]), setReply('"e2"', [mtp("p1"), mtp("p2", "Deny")])]);
  const first = await reader.read(sig(), budget());
  const second = await reader.read(sig(), budget());
  t.is<unknown, unknown>(second!.items[0], first!.items[0]);
  t.not<unknown, unknown>(second!.items[1], first!.items[1]);
  t.deepEqual(second!.items[1], mtp("p2", "Deny"));
});

test("policy set reader › a null item is kept as served", async (t) => {
  const { reader } = await controlPlane(t, OFFERED, [setReply('"e1"', [null, mtp("p1")])]);
  t.deepEqual((await reader.read(sig(), budget()))!.items, [null, mtp("p1")]);
});

test("policy set reader › long-poll outcomes: 304 unchanged, 404 changed, same ETag unsupported, a new set changed with it", async (t) => {
  const { reader, setRequests } = await controlPlane(
    t,
    OFFERED,
    [setReply('"e1"', [mtp("p1")]), { status: 304, text: "" }, { status: 404, json: {} }, setReply('"e1"', [mtp("p1")]), setReply('"e2"', [mtp("p1", "Deny")]), setReply('"e3"', [], dpDoc({ name: "b" }))],
    { requestTimeoutMs: 2000 },
  );
  await reader.read(sig(), budget());
  t.deepEqual(await reader.waitForChange('"e1"', 2000, sig(), budget()), { outcome: "unchanged" });
  t.deepEqual(await reader.waitForChange('"e1"', 2000, sig(), budget()), { outcome: "changed" });
  t.deepEqual(await reader.waitForChange('"e1"', 2000, sig(), budget()), { outcome: "unsupported" });
  t.deepEqual(await reader.waitForChange('"e1"', 2000, sig(), budget()), { outcome: "changed", set: { items: [mtp("p1", "Deny")], etag: '"e2"' } });
  // a new set whose Dataplane is not ours: changed, without a set
  t.deepEqual(await reader.waitForChange('"e2"', 2000, sig(), budget()), { outcome: "changed" });
  // the long-poll waits on the ETag; the one on the set held asked for the change alone
  const watch = setRequests()[1]!;
  t.regex(watch.path, /_policy-set\?wait=2000ms$/);
  t.is(watch.ifNoneMatch, '"e1"');
  t.is(watch.delta, "1");
});

test("policy set reader › a long-poll answered with an error status is refused", async (t) => {
  const { reader } = await controlPlane(t, OFFERED, [setReply('"e1"', [mtp("p1")]), { ...setReply('"e2"', [mtp("p2")]), status: 503 }]);
  await reader.read(sig(), budget());
  const err = await fails(reader.waitForChange('"e1"', 1000, sig(), budget()));
  t.true(err instanceof SyncError);
  t.regex((err as Error).message, /GET \/meshes\/default\/dataplanes\/a\/_policy-set \(watch\)/);
});

/** A long-poll answer relative to the set `base`: item texts, or `Kind/name` for an item kept from it. */
const delta = (etag: string, base: string, items: unknown[]): Reply => ({ headers: { etag, "x-meshext-policy-set-base": base }, json: { dataplane: dpDoc(), items } });

test("policy set reader › answers relative to a set not held are refused as bad responses", async (t) => {
  const { reader } = await controlPlane(t, OFFERED, [
    setReply('"e1"', [mtp("p1")]),
    delta('"e3"', '"e2"', ["MeshTrafficPermission/p1"]),
  ]);
  await reader.read(sig(), budget());
  const err = await fails(reader.waitForChange('"e1"', 1000, sig(), budget()));
  t.true(err instanceof SyncError);
  t.is((err as SyncError).reason, "bad_response");
  t.regex((err as Error).message, /_policy-set: an answer relative to a set this sidecar does not hold \("e2"\)/);
});

test("policy set reader › a named inbound on another port does not read as ours", async (t) => {
  const named = (port: number) => dpDoc({ networking: { address: "127.0.0.1", inbound: [{ name: "http", port, tags: { "kuma.io/service": "svc-a", version: "v1" } }] } });
  const { reader } = await controlPlane(t, OFFERED, [setReply('"e1"', [mtp("p1")], named(9090)), setReply('"e2"', [mtp("p1")], named(8080))], { engineDoc: named(8080) });
  t.is(await reader.read(sig(), budget()), undefined);
  t.truthy(await reader.read(sig(), budget()));
});

test("policy set reader › an answer relative to the set held leaves the last full answer's texts as those the next full one is read against", async (t) => {
  const { reader } = await controlPlane(t, OFFERED, [
    setReply('"e1"', [mtp("p1"), mtp("p2")]),
    delta('"e2"', '"e1"', ["MeshTrafficPermission/p1", mtp("p2", "Deny")]),
    setReply('"e3"', [mtp("p1"), mtp("p2")]),
  ]);
  const full = await reader.read(sig(), budget());
  // when a long-poll answers relative to it
  const changed = await reader.waitForChange('"e1"', 1000, sig(), budget());
  t.deepEqual(changed.set!.items, [mtp("p1"), mtp("p2", "Deny")]);
  // then a following full answer reuses the objects of the last full answer for the same texts
  const again = await reader.read(sig(), budget());
  t.is<unknown, unknown>(again!.items[0], full!.items[0]);
  t.is<unknown, unknown>(again!.items[1], full!.items[1]);
});

test("policy set reader › an answer naming an item the set held does not have is refused, naming it", async (t) => {
  const { reader } = await controlPlane(t, OFFERED, [
    setReply('"e1"', [mtp("p1")]),
    delta('"e2"', '"e1"', ["MeshTrafficPermission/ghost"]),
  ]);
  await reader.read(sig(), budget());
  const err = await fails(reader.waitForChange('"e1"', 1000, sig(), budget()));
  t.true(err instanceof SyncError);
  t.regex((err as Error).message, /_policy-set: an answer relative to the set held names MeshTrafficPermission\/ghost, which it does not hold/);
});

test("policy set reader › given an answer relative to the set held, when an item comes again in full with the same text, then it is the object read before", async (t) => {
  const { reader } = await controlPlane(t, OFFERED, [setReply('"e1"', [mtp("p1"), mtp("p2")]), delta('"e2"', '"e1"', ["MeshTrafficPermission/p1", mtp("p2")])]);
  const full = await reader.read(sig(), budget());
  const changed = await reader.waitForChange('"e1"', 1000, sig(), budget());
  t.is<unknown, unknown>(changed.set!.items[0], full!.items[0], "named by its key");
  t.is<unknown, unknown>(changed.set!.items[1], full!.items[1], "served with the same text");
});

test("policy set reader › given a held item without a name, when an answer relative to the set names it by kind alone, then it is refused", async (t) => {
  const nameless = { type: "MeshTrafficPermission", mesh: "default", spec: {} };
  const { reader } = await controlPlane(t, OFFERED, [setReply('"e1"', [nameless]), delta('"e2"', '"e1"', ["MeshTrafficPermission/undefined"])]);
  await reader.read(sig(), budget());
  const err = await fails(reader.waitForChange('"e1"', 1000, sig(), budget()));
  t.true(err instanceof SyncError);
  t.regex((err as Error).message, /names MeshTrafficPermission\/undefined, which it does not hold/);
});
