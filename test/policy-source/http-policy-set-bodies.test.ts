// The policy set reader when a body does not arrive whole: the root cut by an abort, a set cut by the connection.
import test, { type ExecutionContext } from "ava";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { KumaClient, SyncError, syncBudget } from "../../extproc/policy-source/kuma-client.js";
import { PolicySetReader } from "../../extproc/policy-source/http-policy-set.js";
import { dataplaneFromObject } from "../../extproc/policy/documents/dataplane.js";
import type { Logger } from "../../extproc/log.js";

const dpDoc = { type: "Dataplane", mesh: "default", name: "a", networking: { address: "127.0.0.1", inbound: [{ port: 8080, tags: { "kuma.io/service": "svc-a" } }] } };
const ROOT = JSON.stringify({ features: ["dataplane-policy-set"] });
const SET = JSON.stringify({ dataplane: dpDoc, items: [] });

/** A reader on a server answering each request with `handler`; `afterRoot` runs once the root's headers are in, its body unread. */
async function readerOn(t: ExecutionContext, handler: (req: IncomingMessage, res: ServerResponse) => void, afterRoot = () => {}) {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const log = { info: () => {}, warn: () => {}, debug: () => {}, error: () => {} } as unknown as Logger;
  const dp = dataplaneFromObject(dpDoc).dataplane!;
  class Client extends KumaClient {
    override async request(url: URL, headers: Record<string, string>, timeoutMs: number, signal?: AbortSignal) {
      const reply = await super.request(url, headers, timeoutMs, signal);
      if (url.pathname === "/") afterRoot();
      return reply;
    }
  }
  return new PolicySetReader(new Client({ baseUrl, mesh: "default", maxListBytes: 1 << 20 }), { baseUrl, mesh: "default", dataplane: () => dp, log });
}

const budget = () => syncBudget(1 << 20);

test("policy set bodies › given the root's body cut by our abort, then the read rejects, and the next read asks the root again", async (t) => {
  let rootAsked = 0;
  let stall = true;
  const aborted = new AbortController();
  const reader = await readerOn(t, (req, res) => {
    if (req.url !== "/") return void res.writeHead(200, { "content-type": "application/json", etag: '"e1"' }).end(SET);
    rootAsked++;
    if (!stall) return void res.writeHead(200, { "content-type": "application/json" }).end(ROOT);
    res.writeHead(200, { "content-type": "application/json" });
    res.write(ROOT.slice(0, 5)); // half the body, and the rest never
  }, () => stall && aborted.abort(new Error("shutting down")));
  await t.throwsAsync(reader.read(aborted.signal, budget())); // the body cut short: not read as "no set offered"
  stall = false;
  t.deepEqual(await reader.read(new AbortController().signal, budget()), { items: [], etag: '"e1"' }, "not taken for a control plane without the set");
  t.is(rootAsked, 2);
});

test("policy set bodies › given a set whose connection is cut mid-body, then the read fails as a network error", async (t) => {
  const reader = await readerOn(t, (req, res) => {
    if (req.url === "/") return void res.writeHead(200, { "content-type": "application/json" }).end(ROOT);
    res.writeHead(200, { "content-type": "application/json", etag: '"e1"', "content-length": String(SET.length) });
    res.write(SET.slice(0, 10), () => res.destroy());
  });
  const err = await reader.read(new AbortController().signal, budget()).then(() => undefined, (e: unknown) => e);
  t.true(err instanceof SyncError, String(err));
  t.is((err as SyncError).reason, "network");
  t.regex((err as Error).message, /_policy-set: could not read the policy set: /);
});
