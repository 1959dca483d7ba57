// KumaClient.listAll across pages: an empty `next`, a `next` back to a page read, a 404 after the first page, a body cut mid-page.
import test, { type ExecutionContext } from "ava";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { POLICY_TYPES } from "../../extproc/kuma-rest/resources.js";
import { KumaClient, SyncError } from "../../extproc/policy-source/kuma-client.js";

/** A client on a server answering each request with `handler`. */
async function clientOn(t: ExecutionContext, handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return new KumaClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, mesh: "default", maxListBytes: 1 << 20 });
}

const json = (res: ServerResponse, status: number, body: unknown) => void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
const type = POLICY_TYPES[0]!;
const item = (name: string) => ({ type: type.kind, mesh: "default", name });
const failure = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);

test("kuma client pages › given a page whose next is an empty string, then it is the last page", async (t) => {
  const client = await clientOn(t, (_req, res) => json(res, 200, { total: 1, items: [item("a")], next: "" }));
  t.deepEqual((await client.listAll(type)).items, [item("a")]);
});

test("kuma client pages › given a next link back to the first page, then the list fails as a bad response", async (t) => {
  const client = await clientOn(t, (req, res) => json(res, 200, { total: 2, items: [item("a")], next: req.url!.includes("offset=1") ? req.url!.replace("offset=1", "offset=0") : `${req.url}&offset=1` }));
  const err = await failure(client.listAll(type));
  t.true(err instanceof SyncError, String(err));
  t.is((err as SyncError).reason, "bad_response");
  t.regex((err as Error).message, /pagination cycles/);
});

test("kuma client pages › given an optional list whose second page is answered 404, then it fails instead of reading as missing", async (t) => {
  const client = await clientOn(t, (req, res) => (req.url!.includes("offset=1") ? json(res, 404, {}) : json(res, 200, { total: 2, items: [item("a")], next: `${req.url}&offset=1` })));
  const err = await failure(client.listAll(type, undefined, true));
  t.true(err instanceof SyncError, String(err));
  t.is((err as SyncError).reason, "client_error");
});

test("kuma client pages › given a page cut mid-body, then the list fails as a network error", async (t) => {
  const body = JSON.stringify({ total: 1, items: [item("a")], next: null });
  const client = await clientOn(t, (_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": String(body.length) });
    res.write(body.slice(0, 10), () => res.destroy());
  });
  const err = await failure(client.listAll(type));
  t.true(err instanceof SyncError, String(err));
  t.is((err as SyncError).reason, "network");
  t.regex((err as Error).message, /could not read the list body/);
});
