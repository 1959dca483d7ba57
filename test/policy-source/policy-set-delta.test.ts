// The sidecar's reader of its own policy set, on answers relative to the set it holds: it asks for them only
// with the ETag of the set it holds, resolves each item named by key to the object held, and refuses an answer
// it cannot resolve, asking for the next one in full. Served by a scripted HTTP server on a real socket.
import test from "ava";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { KumaClient, SyncError, syncBudget } from "../../extproc/policy-source/kuma-client.js";
import { PolicySetReader } from "../../extproc/policy-source/http-policy-set.js";
import { dataplaneFromObject } from "../../extproc/policy/documents/dataplane.js";
import { silentLogger } from "../../extproc/log.js";

const dpDoc = { type: "Dataplane", mesh: "default", name: "a", networking: { address: "127.0.0.1", inbound: [{ port: 8080, tags: { "kuma.io/service": "svc-a" } }] } };
const mtp = (name: string, action = "Allow") => ({ type: "MeshTrafficPermission", mesh: "default", name, spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action } }] } });

interface Answer {
  etag: string;
  base?: string;
  items: unknown[];
}

/** Serves `GET /` with the feature and each set request with the next scripted answer; records the requests. */
async function scriptedControlPlane(t: { teardown(f: () => void): void }, answers: Answer[]) {
  const requests: Array<{ ifNoneMatch?: string; asksDelta: boolean }> = [];
  const server = createServer((req: IncomingMessage, res) => {
    if (req.url === "/") return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ features: ["dataplane-policy-set"] }));
    requests.push({ ifNoneMatch: req.headers["if-none-match"], asksDelta: req.headers["x-meshext-policy-set-delta"] !== undefined });
    const a = answers.shift();
    if (!a) return void res.writeHead(304).end();
    res.writeHead(200, { "content-type": "application/json", etag: a.etag, ...(a.base ? { "x-meshext-policy-set-base": a.base } : {}) }).end(JSON.stringify({ dataplane: dpDoc, total: a.items.length, items: a.items }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => server.close());
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dp = dataplaneFromObject(dpDoc).dataplane!;
  const reader = new PolicySetReader(new KumaClient({ baseUrl, mesh: "default", maxListBytes: 1 << 20 }), { baseUrl, mesh: "default", dataplane: () => dp, log: silentLogger() });
  return { reader, requests };
}

const signal = new AbortController().signal;
const budget = () => syncBudget(1 << 20);

test("policy set delta › given a set held, when the long-poll's answer is relative to it, then items named by key are the objects held and the changed one is new", async (t) => {
  const { reader, requests } = await scriptedControlPlane(t, [
    { etag: '"e1"', items: [mtp("p1"), mtp("p2")] },
    { etag: '"e2"', base: '"e1"', items: ["MeshTrafficPermission/p1", mtp("p2", "Deny")] },
  ]);
  const first = await reader.read(signal, budget());
  // when the set changes and the long-poll on e1 answers relative to it
  const changed = await reader.waitForChange('"e1"', 1000, signal, budget());
  // then it asked for the change alone, with the ETag it holds
  t.deepEqual(requests.at(-1), { ifNoneMatch: '"e1"', asksDelta: true });
  // and p1 is the very object held, p2 the new version
  t.is(changed.outcome, "changed");
  t.is(changed.set!.etag, '"e2"');
  t.is<unknown, unknown>(changed.set!.items[0], first!.items[0]);
  t.deepEqual(changed.set!.items[1], mtp("p2", "Deny"));
});

test("policy set delta › given a set held, when an answer names an item it does not hold, then the answer is refused and the next long-poll asks for the set in full", async (t) => {
  const { reader, requests } = await scriptedControlPlane(t, [
    { etag: '"e1"', items: [mtp("p1")] },
    { etag: '"e2"', base: '"e1"', items: ["MeshTrafficPermission/ghost"] },
    { etag: '"e2"', items: [mtp("p1", "Deny")] },
  ]);
  await reader.read(signal, budget());
  // when the answer relative to e1 names an item that e1 does not hold
  const refused = await reader.waitForChange('"e1"', 1000, signal, budget()).catch((err: unknown) => err);
  // then it is a bad answer (the last good set stays), and the next long-poll does not ask for a change alone
  t.true(refused instanceof SyncError);
  t.is((refused as SyncError).reason, "bad_response");
  const full = await reader.waitForChange('"e1"', 1000, signal, budget());
  t.deepEqual(requests.at(-1), { ifNoneMatch: '"e1"', asksDelta: false });
  t.deepEqual(full.set!.items, [mtp("p1", "Deny")]);
});

test("policy set delta › given a set held, when an answer is relative to another set, then it is refused", async (t) => {
  const { reader } = await scriptedControlPlane(t, [
    { etag: '"e1"', items: [mtp("p1")] },
    { etag: '"e3"', base: '"e2"', items: ["MeshTrafficPermission/p1"] },
  ]);
  await reader.read(signal, budget());
  const refused = await reader.waitForChange('"e1"', 1000, signal, budget()).catch((err: unknown) => err);
  t.true(refused instanceof SyncError);
  t.regex((refused as Error).message, /does not hold/);
});

test("policy set delta › given a long-poll on an ETag other than the set it holds, when it asks, then it asks for the set in full", async (t) => {
  const { reader, requests } = await scriptedControlPlane(t, [{ etag: '"e1"', items: [mtp("p1")] }]);
  await reader.read(signal, budget());
  await reader.waitForChange('"other"', 200, signal, budget());
  t.deepEqual(requests.at(-1), { ifNoneMatch: '"other"', asksDelta: false });
});
