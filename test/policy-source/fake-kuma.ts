// A stand-in for a real Kuma control plane: only the plain list endpoints (GET /meshes/{mesh}/{plural}) with
// Kuma's {total, items, next} pagination, no ETag and no long-poll; Dataplane PUT/GET/DELETE; scripted failures.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeKuma {
  url: string;
  /** plural → items served. */
  items: Map<string, unknown[]>;
  dataplanes: Map<string, unknown>;
  /** Requests seen, as "METHOD path?query". */
  requests: string[];
  /** Status to answer list requests with instead of 200 (e.g. 401, 503, 429), while set. */
  failWith: number | undefined;
  close(): Promise<void>;
}

/** Kuma caps nothing below 1000, but this fake pages by at most `maxPage` to force the client through `next`. */
export async function startFakeKuma(maxPage = 2): Promise<FakeKuma> {
  const fake: FakeKuma = { url: "", items: new Map(), dataplanes: new Map(), requests: [], failWith: undefined, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
    fake.requests.push(`${req.method} ${url.pathname}${url.search}`);
    const seg = url.pathname.split("/").filter(Boolean);
    const reply = (status: number, body?: unknown) => {
      res.writeHead(status, body === undefined ? {} : { "content-type": "application/json" });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      // `GET /meshes` is served only when a test set items for it (Kuma before 2.7 style otherwise: 404).
      if (seg[0] === "meshes" && seg.length === 1 && fake.items.has("meshes")) seg.push("", "meshes");
      if (seg[0] !== "meshes" || seg.length < 3) return reply(404, { title: "Not Found" });
      if (seg[2] === "dataplanes" && seg.length >= 4) {
        if (seg.length === 5) return reply(404, { title: "Not Found", detail: "no heartbeat endpoint in Kuma" });
        const key = `${seg[1]}/${seg[3]}`;
        if (req.method === "PUT") {
          const existed = fake.dataplanes.has(key);
          fake.dataplanes.set(key, JSON.parse(body));
          return reply(existed ? 200 : 201, JSON.parse(body));
        }
        if (req.method === "DELETE") return reply(fake.dataplanes.delete(key) ? 200 : 404, {});
        return fake.dataplanes.has(key) ? reply(200, fake.dataplanes.get(key)) : reply(404, {});
      }
      if (fake.failWith) return reply(fake.failWith, { title: "scripted failure" });
      if (seg.length !== 3 || req.method !== "GET") return reply(405, {});
      const all = fake.items.get(seg[2]!) ?? [];
      const size = Math.min(Number(url.searchParams.get("size") ?? 100), maxPage);
      const offset = Number(url.searchParams.get("offset") ?? 0);
      const page = all.slice(offset, offset + size);
      let next: string | null = null;
      if (offset + size < all.length) {
        const n = new URL(url);
        n.searchParams.set("offset", String(offset + size));
        next = n.toString();
      }
      reply(200, { total: all.length, items: page, next });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return fake;
}
