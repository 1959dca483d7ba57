// A load client that follows a control plane's endpoints, as Kuma clients do: it polls GET
// /meshes/<mesh>/dataplanes, sends only to dataplanes reported online, and never retries a request that may have
// been processed (one that fails is counted, not repeated). The one exception is what HTTP/2 itself says was not
// processed: a stream closed with REFUSED_STREAM (RFC 9113 §8.7) is sent again, once, on a new connection, as Go's
// HTTP/2 client does on its own (golang.org/x/net/http2, canRetryError) and node:http2 does not
// (h2RefusedUnprocessed). Load: HTTP/1.1 keep-alive connections (a request every `intervalMs` each), one
// multiplexed h2c connection (node:http2, prior knowledge), and 2 s requests kept in flight at all times. A
// connection stays with its instance until the server closes it; only then is an online instance picked again.
import { Agent, request as httpRequest, type IncomingMessage } from "node:http";
import { connect as http2Connect, constants as h2, type ClientHttp2Session } from "node:http2";
import type { Socket } from "node:net";

export interface Endpoint {
  name: string;
  host: string;
  port: number;
}

export interface RequestRecord {
  kind: "h1" | "h1-long" | "h2" | "h2-long";
  slot: number;
  /** Connection id (one per HTTP/1.1 socket or HTTP/2 session). */
  conn: number;
  instance: string;
  startMs: number;
  endMs: number;
  status?: number;
  /** HTTP/1.1: the response's `connection` header. */
  connectionHeader?: string;
  /** The drain filter's diagnostic header (`x-meshext-draining`). */
  drainingHeader?: string;
  error?: string;
  /** HTTP/2: the first attempt was refused (REFUSED_STREAM, on connection `refusedOnConn`) and this is the retry's outcome. */
  refusedOnConn?: number;
}

export interface ConnectionRecord {
  id: number;
  kind: "h1" | "h1-long" | "h2";
  slot: number;
  instance: string;
  openedMs: number;
  closedMs?: number;
  /** HTTP/2: GOAWAY frames received (error code and last stream id). */
  goaways: { code: number; lastStreamId: number; atMs: number }[];
  /** HTTP/2: streams that ended with RST_STREAM (non-zero code) or an error, REFUSED_STREAM aside. */
  resetStreams: number;
  /** HTTP/2: streams closed with REFUSED_STREAM (not processed: retried on a new connection). */
  refusedStreams?: number;
}

export interface EndpointLoadOptions {
  controlPlane: string;
  mesh?: string;
  /** HTTP/1.1 keep-alive connections sending a short request each `intervalMs`. */
  h1Connections: number;
  /** HTTP/1.1 connections each sending 2 s requests back to back (staggered, so some are always in flight). */
  h1LongConnections: number;
  /** One HTTP/2 connection multiplexing a short stream each `intervalMs` and a 2 s stream at all times. */
  h2: boolean;
  intervalMs: number;
  longDelayMs: number;
  /** How often the control plane's dataplane list is read. */
  endpointPollMs: number;
  /** Request path (the echo app's). */
  path?: string;
  /** Picks the first instance for the HTTP/2 connection (otherwise the least used online one). */
  h2Prefer?: string;
}

export interface EndpointLoad {
  requests: RequestRecord[];
  connections: ConnectionRecord[];
  /** The online endpoints as last read, and when each name was first seen not online (draining or gone). */
  online(): Endpoint[];
  leftAtMs: Map<string, number>;
  /** Requests in flight now, by instance. */
  inFlight(instance: string): number;
  /** Resolves once every connection kind has an online instance and a first 200. */
  warmedUp: Promise<void>;
  /** Stops sending, waits for the requests in flight, closes every connection. */
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function startEndpointLoad(opts: EndpointLoadOptions): EndpointLoad {
  const mesh = opts.mesh ?? "default";
  const path = opts.path ?? "/";
  const requests: RequestRecord[] = [];
  const connections: ConnectionRecord[] = [];
  const leftAtMs = new Map<string, number>();
  const inFlightBy = new Map<string, number>();
  let endpoints: Endpoint[] = [];
  let running = true;
  let nextConn = 1;
  const loops: Promise<void>[] = [];
  const bump = (instance: string, by: number) => inFlightBy.set(instance, (inFlightBy.get(instance) ?? 0) + by);
  const useCount = (kind: ConnectionRecord["kind"], name: string) => connections.filter((c) => c.kind === kind && c.instance === name && c.closedMs === undefined).length;
  /** The least used online instance for this kind of connection; waits while none is online. */
  const pick = async (kind: ConnectionRecord["kind"], prefer?: string): Promise<Endpoint | undefined> => {
    while (running) {
      const online = endpoints;
      const preferred = prefer ? online.find((e) => e.name === prefer) : undefined;
      if (preferred) return preferred;
      if (online.length > 0) return [...online].sort((a, b) => useCount(kind, a.name) - useCount(kind, b.name) || a.name.localeCompare(b.name))[0];
      await sleep(10);
    }
    return undefined;
  };

  // Endpoints: the control plane's dataplanes that are online, with their address and first inbound port.
  let firstList: () => void;
  const listed = new Promise<void>((r) => (firstList = r));
  const follow = async () => {
    while (running) {
      try {
        const res = await fetch(`${opts.controlPlane}/meshes/${mesh}/dataplanes`);
        const body = (await res.json()) as { items: Array<{ name: string; networking: { address: string; inbound: Array<{ port: number }> }; status?: { state: string } }> };
        const now = Date.now();
        const next = body.items
          .filter((d) => d.status?.state === "online")
          .map((d) => ({ name: d.name, host: d.networking.address, port: d.networking.inbound[0]!.port }));
        for (const e of endpoints) if (!next.some((n) => n.name === e.name) && !leftAtMs.has(e.name)) leftAtMs.set(e.name, now);
        endpoints = next;
        if (next.length > 0) firstList();
      } catch {
        // the control plane is briefly unreachable: keep the last list, as clients do
      }
      await sleep(opts.endpointPollMs);
    }
  };
  loops.push(follow());

  let warm = 0;
  const expectedWarm = opts.h1Connections + opts.h1LongConnections + (opts.h2 ? 2 : 0);
  let warmedUp: () => void;
  const warmed = new Promise<void>((r) => (warmedUp = r));
  const markWarm = (once: { done: boolean }) => {
    if (once.done) return;
    once.done = true;
    if (++warm === expectedWarm) warmedUp();
  };

  // HTTP/1.1: one socket at a time per slot (an Agent with maxSockets 1 and keep-alive).
  const h1Slot = async (slot: number, kind: "h1" | "h1-long", startDelayMs: number) => {
    await listed;
    await sleep(startDelayMs);
    const warmOnce = { done: false };
    const socketIds = new WeakMap<Socket, ConnectionRecord>();
    let endpoint: Endpoint | undefined;
    let agent: Agent | undefined;
    let current: ConnectionRecord | undefined;
    while (running) {
      if (!endpoint || !current || current.closedMs !== undefined) {
        agent?.destroy();
        endpoint = await pick(kind);
        if (!endpoint) break;
        agent = new Agent({ keepAlive: true, maxSockets: 1 });
        current = undefined;
      }
      const target = endpoint;
      const startMs = Date.now();
      const rec: RequestRecord = { kind, slot, conn: 0, instance: target.name, startMs, endMs: 0 };
      requests.push(rec);
      bump(target.name, 1);
      const delay = kind === "h1-long" ? `?delay=${opts.longDelayMs}` : "";
      await new Promise<void>((resolve) => {
        const req = httpRequest({ host: target.host, port: target.port, path: path + delay, agent }, (res: IncomingMessage) => {
          rec.status = res.statusCode;
          rec.connectionHeader = header(res.headers.connection);
          rec.drainingHeader = header(res.headers["x-meshext-draining"]);
          res.resume();
          res.once("end", resolve);
          res.once("error", (err) => ((rec.error = err.message), resolve()));
        });
        req.once("socket", (socket: Socket) => {
          let conn = socketIds.get(socket);
          if (!conn) {
            conn = { id: nextConn++, kind, slot, instance: target.name, openedMs: Date.now(), goaways: [], resetStreams: 0 };
            connections.push(conn);
            socketIds.set(socket, conn);
            const c = conn;
            socket.once("close", () => (c.closedMs ??= Date.now()));
          }
          rec.conn = conn.id;
          current = conn;
        });
        req.once("error", (err) => ((rec.error = err.message), resolve()));
        req.end();
      });
      rec.endMs = Date.now();
      bump(target.name, -1);
      if (rec.status !== 200 || rec.error) {
        // No retry: counted as failed. The connection is gone or unusable: pick again.
        if (current) current.closedMs ??= Date.now();
      } else markWarm(warmOnce);
      // `connection: close`: Node closes the socket after the response; the next request picks an instance again.
      if (rec.connectionHeader === "close" && current) current.closedMs ??= Date.now();
      // The next request after the interval (2 s requests go back to back; after a failure they wait too)
      if (kind === "h1" || failed(rec)) await sleep(opts.intervalMs);
    }
    agent?.destroy();
  };

  // HTTP/2: one session; a GOAWAY makes it take no new stream, and a new session goes to an online instance.
  const h2State = { session: undefined as ClientHttp2Session | undefined, conn: undefined as ConnectionRecord | undefined, endpoint: undefined as Endpoint | undefined };
  const h2Session = async (): Promise<{ session: ClientHttp2Session; conn: ConnectionRecord; endpoint: Endpoint } | undefined> => {
    if (h2State.session && !h2State.session.closed && !h2State.session.destroyed && h2State.conn!.goaways.length === 0) {
      return { session: h2State.session, conn: h2State.conn!, endpoint: h2State.endpoint! };
    }
    const endpoint = await pick("h2", h2State.conn ? undefined : opts.h2Prefer);
    if (!endpoint || !running) return undefined;
    if (h2State.session && h2State.conn!.goaways.length === 0 && !h2State.session.closed && !h2State.session.destroyed) return h2Session();
    const session = http2Connect(`http://${endpoint.host}:${endpoint.port}`);
    const conn: ConnectionRecord = { id: nextConn++, kind: "h2", slot: 0, instance: endpoint.name, openedMs: Date.now(), goaways: [], resetStreams: 0 };
    connections.push(conn);
    session.on("goaway", (code, lastStreamId) => conn.goaways.push({ code, lastStreamId, atMs: Date.now() }));
    session.on("error", () => {});
    session.once("close", () => (conn.closedMs = Date.now()));
    Object.assign(h2State, { session, conn, endpoint });
    return { session, conn, endpoint };
  };
  /** One attempt on the current session; resolves with the stream's close code (undefined: the session refused it). */
  const h2Attempt = (s: { session: ClientHttp2Session; conn: ConnectionRecord }, rec: RequestRecord, kind: "h2" | "h2-long") =>
    new Promise<number | undefined>((resolve) => {
      let stream;
      try {
        stream = s.session.request({ ":path": path + (kind === "h2-long" ? `?delay=${opts.longDelayMs}` : "") });
      } catch (err) {
        rec.error = (err as Error).message;
        // A session this client cannot use any more: the next request opens a new one.
        h2State.session = undefined;
        return resolve(undefined);
      }
      stream.on("response", (headers) => {
        rec.status = Number(headers[":status"]);
        rec.drainingHeader = header(headers["x-meshext-draining"]);
      });
      stream.resume();
      stream.on("error", (err) => (rec.error ??= err.message));
      stream.once("close", () => {
        if (h2RefusedUnprocessed(stream.rstCode)) s.conn.refusedStreams = (s.conn.refusedStreams ?? 0) + 1;
        else if (stream.rstCode !== h2.NGHTTP2_NO_ERROR) {
          s.conn.resetStreams++;
          rec.error ??= `stream reset with code ${stream.rstCode}`;
        }
        resolve(stream.rstCode);
      });
      stream.end();
    });
  const h2Request = async (kind: "h2" | "h2-long", warmOnce: { done: boolean }) => {
    const s = await h2Session();
    if (!s) return false;
    const startMs = Date.now();
    const rec: RequestRecord = { kind, slot: 0, conn: s.conn.id, instance: s.endpoint.name, startMs, endMs: 0 };
    requests.push(rec);
    bump(s.endpoint.name, 1);
    const code = await h2Attempt(s, rec, kind);
    bump(s.endpoint.name, -1);
    if (code !== undefined && h2RefusedUnprocessed(code)) {
      // Not processed (the GOAWAY that came first closed the session to new streams): send it again, once, on a new
      // session. The record keeps the retry's outcome and says which connection refused the first attempt.
      const again = await h2Session();
      if (again) {
        Object.assign(rec, { refusedOnConn: s.conn.id, conn: again.conn.id, instance: again.endpoint.name, status: undefined, error: undefined });
        bump(again.endpoint.name, 1);
        await h2Attempt(again, rec, kind);
        bump(again.endpoint.name, -1);
      }
    }
    rec.endMs = Date.now();
    if (rec.status === 200 && !rec.error) markWarm(warmOnce);
    return failed(rec);
  };
  const h2Short = async () => {
    await listed;
    const warmOnce = { done: false };
    const pending = new Set<Promise<void>>();
    while (running) {
      const p = h2Request("h2", warmOnce).then(() => {});
      pending.add(p);
      void p.then(() => pending.delete(p));
      await sleep(opts.intervalMs);
    }
    await Promise.all(pending);
  };
  const h2Long = async () => {
    await listed;
    const warmOnce = { done: false };
    while (running) if (await h2Request("h2-long", warmOnce)) await sleep(opts.intervalMs);
  };

  for (let i = 0; i < opts.h1Connections; i++) loops.push(h1Slot(i, "h1", (i * opts.intervalMs) / Math.max(1, opts.h1Connections)));
  for (let i = 0; i < opts.h1LongConnections; i++) loops.push(h1Slot(i, "h1-long", (i * opts.longDelayMs) / Math.max(1, opts.h1LongConnections)));
  if (opts.h2) loops.push(h2Short(), h2Long());

  return {
    requests,
    connections,
    leftAtMs,
    online: () => endpoints,
    inFlight: (instance) => inFlightBy.get(instance) ?? 0,
    warmedUp: warmed,
    async stop() {
      running = false;
      await Promise.all(loops);
      h2State.session?.close();
    },
  };
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(", ") : v;
}

/** A request that did not end in a 200. */
export const failed = (r: RequestRecord) => r.status !== 200 || r.error !== undefined;

/**
 * Whether an HTTP/2 stream's close code says the server did not process it: REFUSED_STREAM (RFC 9113 §8.7, "the
 * stream was closed prior to any processing ... the client can safely retry"). node:http2 reports it for a request
 * it submitted but had not sent yet when a GOAWAY arrived, graceful or not: nghttp2 refuses to open a stream once
 * it has received GOAWAY (nghttp2 lib/nghttp2_session.c, session_predicate_request_headers_send) and, when that
 * check fails, closes the stream with REFUSED_STREAM so that the application can send the request again
 * (nghttp2_session_mem_send_internal). Envoy never saw such a request: test/envoy-real/h2-drain.test.ts shows it.
 */
export function h2RefusedUnprocessed(rstCode: number | undefined): boolean {
  return rstCode === h2.NGHTTP2_REFUSED_STREAM;
}
