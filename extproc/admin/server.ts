// The admin HTTP server: a tiny router (method + exact path) that features register routes on
// (/metrics, /ready, /drain, /explain…), each with its access (admin/access.ts; local unless declared).
// Bodies are size-limited; handler errors become 500 JSON; refused callers get 403 before any handler runs.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { splitHostPort } from "../host-port.js";
import type { Logger } from "../log.js";
import { BAD_TARGET_MESSAGE, requestUrl } from "../request-target.js";
import { type AdminAccess, checkAccess, DEFAULT_ACCESS } from "./access.js";

export const ADMIN_MAX_BODY_BYTES = 1 << 20;

export interface AdminRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  /** The raw request body (empty for GET). */
  body: Buffer;
  /** Resolves when the client goes away before the reply (for long waits). */
  closed: Promise<void>;
}

export interface AdminReply {
  status: number;
  headers?: Record<string, string>;
  body: string | Buffer;
}

export type AdminHandler = (req: AdminRequest) => AdminReply | Promise<AdminReply>;

export function json(status: number, value: unknown, headers: Record<string, string> = {}): AdminReply {
  return { status, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(value) + "\n" };
}

export interface AdminRouteInfo {
  method: string;
  path: string;
  access: AdminAccess;
}

export interface AdminServerOptions {
  /** Bearer token that opens `local` routes to non-loopback callers; empty: loopback only. */
  adminToken?: string;
}

/** How long close() lets requests in progress finish before cutting every admin connection. */
export const ADMIN_CLOSE_GRACE_MS = 1000;

export class AdminServer {
  private readonly routes = new Map<string, { handler: AdminHandler; access: AdminAccess }>();
  private readonly server: Server;
  private readonly adminToken: string;

  constructor(
    private readonly log: Logger,
    options: AdminServerOptions = {},
  ) {
    this.adminToken = options.adminToken ?? "";
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 5000;
  }

  /**
   * Registers a handler for METHOD + exact path (query string ignored for matching). Without an
   * `access` the route is `local`: only loopback peers or holders of the admin token reach it.
   */
  route(method: string, path: string, handler: AdminHandler, access: AdminAccess = DEFAULT_ACCESS): void {
    this.routes.set(`${method} ${path}`, { handler, access });
  }

  /** Every registered route with its access (for tests and docs). */
  listRoutes(): AdminRouteInfo[] {
    return [...this.routes].map(([key, r]) => {
      const [method, path] = key.split(" ") as [string, string];
      return { method, path, access: r.access };
    });
  }

  async listen(hostPort: string): Promise<AddressInfo> {
    const { host, port } = splitHostPort(hostPort);
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    return this.server.address() as AddressInfo;
  }

  /**
   * Stops listening and closes keep-alive connections at once; connections still open after `graceMs` —
   * ones that never sent a request, or are stuck mid-request (slow headers or body) — are cut, so an exit
   * is never held up by a peer.
   */
  async close(graceMs = ADMIN_CLOSE_GRACE_MS): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
      timer = setTimeout(() => this.server.closeAllConnections(), graceMs);
    });
    clearTimeout(timer);
  }

  /** Ends open (e.g. long-polling) connections now. */
  closeAllConnections(): void {
    this.server.closeAllConnections();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = requestUrl(req.url, "http://admin");
    if (!url) {
      req.resume();
      const reply = json(400, { error: BAD_TARGET_MESSAGE });
      res.writeHead(reply.status, reply.headers).end(reply.body);
      return;
    }
    const method = req.method ?? "GET";
    const route = this.routes.get(`${method} ${url.pathname}`);
    const verdict = route && checkAccess(route.access, { remoteAddress: req.socket.remoteAddress, authorization: req.headers.authorization }, this.adminToken);
    let reply: AdminReply;
    try {
      if (verdict && !verdict.allowed) {
        this.log.warn({ path: url.pathname, method, peer: req.socket.remoteAddress }, "admin request refused: not loopback and no admin token");
        req.resume();
        reply = json(403, { error: verdict.reason });
      } else if (!route) {
        const allowed = [...this.routes.keys()].filter((k) => k.endsWith(` ${url.pathname}`)).map((k) => k.split(" ")[0]!);
        reply = allowed.length
          ? json(405, { error: `method ${method} not allowed on ${url.pathname}` }, { allow: allowed.join(", ") })
          : json(404, { error: `no such endpoint: ${url.pathname}` });
      } else {
        const body = await readBody(req);
        if (body === undefined) {
          reply = json(413, { error: `request body larger than ${ADMIN_MAX_BODY_BYTES} bytes` });
        } else {
          const closed = new Promise<void>((resolve) => res.once("close", () => resolve()));
          reply = await route.handler({ method, path: url.pathname, query: url.searchParams, headers: req.headers, body, closed });
        }
      }
    } catch (err) {
      this.log.error({ err, path: url.pathname }, "admin handler failed");
      reply = json(500, { error: (err as Error).message });
    }
    if (res.destroyed) return;
    res.writeHead(reply.status, reply.headers);
    res.end(reply.body);
  }
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooBig = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > ADMIN_MAX_BODY_BYTES) tooBig = true;
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(tooBig ? undefined : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}
