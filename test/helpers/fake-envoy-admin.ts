// A stand-in Envoy admin on 127.0.0.1 (port 0 unless given): records every call with its time, serves
// /stats?format=json with a settable downstream_rq_active and /ready (503 after /healthcheck/fail),
// calls onQuit on /quitquitquit, and can be told to hang or fail.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedCall {
  method: string;
  /** Path with query string, as sent. */
  url: string;
  /** Path without query string. */
  path: string;
  atMs: number;
  /** The request's Connection header. */
  connection: string | undefined;
}

export type FakeMode = "ok" | "hang" | "fail";

export class FakeEnvoyAdmin {
  readonly calls: RecordedCall[] = [];
  /** Value served for http.<statPrefix>.downstream_rq_active. */
  downstreamRqActive = 0;
  /** The HCM stat_prefix whose stats are served. */
  statPrefix = "inbound";
  /** "hang": never answer; "fail": answer 503. */
  mode: FakeMode = "ok";
  /** When set, the next calls are answered with these statuses (and this body), one each, before `mode` applies again. */
  statuses: number[] = [];
  statusBody = "refused\n";
  /** Called after answering POST /quitquitquit. */
  onQuit: () => void = () => {};
  private healthFailed = false;
  private readonly hanging = new Set<ServerResponse>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(listenPort = 0): Promise<FakeEnvoyAdmin> {
    let self: FakeEnvoyAdmin | undefined;
    const server = createServer((req, res) => self!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(listenPort, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    self = new FakeEnvoyAdmin(server, `http://127.0.0.1:${port}`);
    return self;
  }

  /** "METHOD /path" of each call, in order, without stats polls when asked. */
  callNames(opts: { withStats?: boolean } = {}): string[] {
    return this.calls.filter((c) => opts.withStats || c.path !== "/stats").map((c) => `${c.method} ${c.path}`);
  }

  firstCall(method: string, path: string): RecordedCall | undefined {
    return this.calls.find((c) => c.method === method && c.path === path);
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://fake");
    this.calls.push({ method: req.method ?? "GET", url: req.url ?? "/", path: url.pathname, atMs: Date.now(), connection: req.headers.connection });
    req.resume();
    const status = this.statuses.shift();
    if (status !== undefined) {
      res.writeHead(status).end(this.statusBody);
      return;
    }
    if (this.mode === "hang") {
      this.hanging.add(res);
      return;
    }
    if (this.mode === "fail") {
      res.writeHead(503).end("unavailable\n");
      return;
    }
    if (req.method === "GET" && url.pathname === "/stats" && url.searchParams.get("format") === "json") {
      const name = `http.${this.statPrefix}.downstream_rq_active`;
      const filter = url.searchParams.get("filter");
      const stats = [
        { name, value: this.downstreamRqActive },
        { name: `http.${this.statPrefix}.downstream_cx_active`, value: 7 },
      ].filter((s) => !filter || new RegExp(filter).test(s.name));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ stats }));
      return;
    }
    if (req.method === "GET" && url.pathname === "/ready") {
      res.writeHead(this.healthFailed ? 503 : 200, { "content-type": "text/plain" }).end(this.healthFailed ? "DRAINING\n" : "LIVE\n");
      return;
    }
    if (req.method === "POST" && (url.pathname === "/healthcheck/fail" || url.pathname === "/drain_listeners" || url.pathname === "/quitquitquit")) {
      if (url.pathname === "/healthcheck/fail") this.healthFailed = true;
      res.writeHead(200, { "content-type": "text/plain" }).end("OK\n");
      if (url.pathname === "/quitquitquit") this.onQuit();
      return;
    }
    res.writeHead(404).end("invalid path\n");
  }
}
