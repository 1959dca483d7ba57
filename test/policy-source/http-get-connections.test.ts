// httpGet's connections: kept alive in its own pools (http and https), freed by discard(), and no listener left on the caller's signal.
import test, { type ExecutionContext } from "ava";
import { getEventListeners } from "node:events";
import { createServer, globalAgent as httpGlobalAgent, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer, globalAgent as httpsGlobalAgent } from "node:https";
import type { AddressInfo } from "node:net";
import { httpGet } from "../../extproc/policy-source/http-get.js";
import { eventually } from "../control-plane/helpers.js";
import { makeCert } from "../helpers/tls-cert.js";

/** A server answering `handler`; `ports` is the client port of each request, as seen when it arrived. */
async function server(t: ExecutionContext, handler: (req: IncomingMessage, res: ServerResponse) => void = (_q, res) => res.end("hello"), tls = false) {
  const ports: number[] = [];
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    ports.push(req.socket.remotePort!);
    handler(req, res);
  };
  const s = tls ? createHttpsServer(makeCert("localhost"), onRequest) : createServer(onRequest);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    s.closeAllConnections();
    s.close();
  });
  return { url: new URL(`${tls ? "https" : "http"}://127.0.0.1:${(s.address() as AddressInfo).port}/x`), ports };
}

const readAll = async (body: AsyncIterable<Buffer>) => {
  let s = "";
  for await (const c of body) s += c.toString();
  return s;
};

/** Trusts the test's self-signed certificate for the test's duration. */
function trustAnyCertificate(t: ExecutionContext) {
  const before = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
  t.teardown(() => {
    if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before;
  });
}

for (const scheme of ["http", "https"] as const) {
  test(`http get connections › given two ${scheme} GETs one after the other, when another library destroys the global agent's connections between them, then both went over one connection`, async (t) => {
    if (scheme === "https") trustAnyCertificate(t);
    const cp = await server(t, undefined, scheme === "https");
    const signal = new AbortController().signal;
    t.is(await readAll((await httpGet(cp.url, {}, 5000, signal)).body), "hello");
    t.true(await eventually(() => getEventListeners(signal, "abort").length === 0, 2000), "the first response closed");
    (scheme === "https" ? httpsGlobalAgent : httpGlobalAgent).destroy();
    t.is(await readAll((await httpGet(cp.url, {}, 5000)).body), "hello");
    t.is(cp.ports.length, 2);
    t.is(cp.ports[1], cp.ports[0], "kept alive in httpGet's own pool");
  });
}

test("http get connections › given a reply discarded unread, then it is drained to its end and the next GET reuses its connection", async (t) => {
  const cp = await server(t, (_req, res) => res.end("x".repeat(100_000)));
  const signal = new AbortController().signal;
  (await httpGet(cp.url, {}, 5000, signal)).discard();
  t.true(await eventually(() => getEventListeners(signal, "abort").length === 0, 2000), "the response closed");
  await readAll((await httpGet(cp.url, {}, 5000)).body);
  t.is(cp.ports[1], cp.ports[0]);
});

test("http get connections › given one signal for many GETs, when each ends (read to the end, aborted unread, or failed), then no abort listener is left on it", async (t) => {
  const cp = await server(t);
  const signal = new AbortController().signal;
  const listeners = () => getEventListeners(signal, "abort").length;
  const read = await httpGet(cp.url, {}, 5000, signal);
  t.is(listeners(), 1, "one while the GET is in flight");
  await readAll(read.body);
  t.true(await eventually(() => listeners() === 0, 2000), "read to the end (removed on the response's close, which follows its end)");
  (await httpGet(cp.url, {}, 5000, signal)).abort();
  t.is(listeners(), 0, "aborted unread");
  const refused = new URL(cp.url);
  refused.port = "1";
  await t.throwsAsync(httpGet(refused, {}, 5000, signal));
  t.is(listeners(), 0, "failed");
});
