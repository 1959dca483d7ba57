// httpGet, the control-plane clients' one GET: timeouts, aborts, headers as read, and connections kept alive between requests.
import test from "ava";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { httpGet, RequestTimeoutError } from "../../extproc/policy-source/http-get.js";

async function server(t: { teardown(fn: () => void): void }, handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const seen: IncomingMessage[] = [];
  const s = createServer((req, res) => { seen.push(req); handler(req, res); });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  t.teardown(() => { s.closeAllConnections(); s.close(); });
  return { url: new URL(`http://127.0.0.1:${(s.address() as AddressInfo).port}/x`), seen };
}

const readAll = async (body: AsyncIterable<Buffer>) => { let s = ""; for await (const c of body) s += c.toString(); return s; };

test("http get › given a server that never answers, then it rejects with a RequestTimeoutError naming the time", async (t) => {
  const cp = await server(t, () => undefined);
  const err = await httpGet(cp.url, {}, 40).then(() => undefined, (e: unknown) => e);
  t.true(err instanceof RequestTimeoutError);
  t.is((err as Error).name, "RequestTimeoutError");
  t.is((err as Error).message, "no answer within 40ms");
});

test("http get › given a signal already aborted, then it rejects with the signal's reason and sends nothing; given an abort without an Error, then an 'aborted' error", async (t) => {
  const cp = await server(t, () => undefined);
  const reason = new Error("stop");
  t.is(await httpGet(cp.url, {}, 5000, AbortSignal.abort(reason)).then(() => undefined, (e: unknown) => e), reason);
  t.is(cp.seen.length, 0);
  const ac = new AbortController();
  const pending = httpGet(cp.url, {}, 5000, ac.signal).then(() => undefined, (e: unknown) => e);
  while (cp.seen.length === 0) await new Promise((r) => setImmediate(r));
  ac.abort("not an error");
  const err = await pending;
  t.true(err instanceof Error);
  t.is((err as Error).message, "aborted");
});

test("http get › given a reply, then the request was a GET with our headers, the status and headers are read (repeated ones joined), and the connection is kept for the next request", async (t) => {
  const cp = await server(t, (_req, res) => {
    res.setHeader("set-cookie", ["a=1", "b=2"]);
    res.setHeader("etag", '"e1"');
    res.writeHead(203).end("hello");
  });
  const first = await httpGet(cp.url, { accept: "application/json" }, 5000);
  t.is(first.status, 203);
  t.is(first.headers.get("set-cookie"), "a=1, b=2");
  t.is(first.headers.get("ETag"), '"e1"');
  t.is(first.headers.get("x-none"), null);
  t.is(await readAll(first.body), "hello");
  const second = await httpGet(cp.url, {}, 5000);
  second.discard();
  t.is(cp.seen[0]!.method, "GET");
  t.is(cp.seen[0]!.headers.accept, "application/json");
  t.is(cp.seen[1]!.socket.remotePort, cp.seen[0]!.socket.remotePort, "one kept-alive connection for both");
});
