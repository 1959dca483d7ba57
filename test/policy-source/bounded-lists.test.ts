// Control-plane list bodies are read under a size limit (with a clear error), and a `next` link that
// leads back to a page already read is reported instead of followed again.
import test from "ava";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { POLICY_TYPES } from "../../extproc/kuma-rest/resources.js";
import { KumaClient, SyncError } from "../../extproc/policy-source/kuma-client.js";

async function serve(t: import("ava").ExecutionContext, handler: (req: IncomingMessage, res: ServerResponse, url: URL) => void): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    requests.push(url.pathname + url.search);
    handler(req, res, url);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

const MTP = POLICY_TYPES[0]!;

test("bounded lists › a list body over the limit fails with a clear error, without buffering it all", async (t) => {
  // given a control plane answering with 64 MiB of items, streamed
  const { url } = await serve(t, (_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    const item = JSON.stringify({ type: "MeshTrafficPermission", mesh: "default", name: "x".repeat(200) });
    let sent = 0;
    res.write('{"total": 1, "next": null, "items": [' + item);
    const more = () => {
      while (sent < 64 << 20) {
        sent += item.length + 1;
        if (!res.write("," + item)) return void res.once("drain", more);
      }
      res.end("]}");
    };
    res.on("error", () => {});
    more();
  });
  const client = new KumaClient({ baseUrl: url, mesh: "default", maxListBytes: 1 << 20 });
  const rssBefore = process.memoryUsage().rss;
  const err = await t.throwsAsync(client.listAll(MTP), { instanceOf: SyncError });
  t.is(err!.reason, "bad_response");
  t.regex(err!.message, /larger than 1048576 bytes.*--control-plane-max-list-bytes/);
  t.true(process.memoryUsage().rss - rssBefore < 48 << 20, "the body was not buffered whole");
});

test("bounded lists › a `next` link that cycles back to an earlier page is detected", async (t) => {
  // given pages 0 → 1 → 0 → …
  const { url, requests } = await serve(t, (_req, res, u) => {
    const offset = Number(u.searchParams.get("offset") ?? 0);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ total: 4, items: [], next: `http://x${u.pathname}?size=100&offset=${offset === 0 ? 100 : 0}` }));
  });
  const client = new KumaClient({ baseUrl: url, mesh: "default", maxListBytes: 1 << 20 });
  const err = await t.throwsAsync(client.listAll(MTP), { instanceOf: SyncError });
  t.regex(err!.message, /cycle/);
  t.true(requests.length <= 3, `${requests.length} requests`);
});
