// A stand-in control plane on 127.0.0.1:0 for process-level drain tests: records every call
// (method, path, time) and answers the dataplane lifecycle and list calls with success.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export class FakeControlPlane {
  readonly calls: { method: string; path: string; body: string; atMs: number }[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeControlPlane> {
    let self: FakeControlPlane | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const path = new URL(req.url ?? "/", "http://cp").pathname;
        self!.calls.push({ method: req.method ?? "GET", path, body: Buffer.concat(chunks).toString("utf8"), atMs: Date.now() });
        const body = req.method === "GET" ? { total: 0, items: [], next: null } : {};
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    self = new FakeControlPlane(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return self;
  }

  /** Calls on the dataplane resource itself and its heartbeat, as "METHOD path". */
  dataplaneCalls(): string[] {
    return this.calls.filter((c) => c.path.includes("/dataplanes/")).map((c) => `${c.method} ${c.path}`);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
