// Rotates HTTP/2 connections before Node's rapid-reset limit is reached. Envoy's default
// ext_proc close ends every stream with RST_STREAM; nghttp2 (bundled by Node 20) answers ~1 000
// resets on one connection with GOAWAY(INTERNAL_ERROR), failing every stream in flight. After
// `maxStreams` streams on a connection we send the graceful two-step GOAWAY that gRPC's
// max_connection_age uses: clients finish what is in flight and open a fresh connection.
import { constants as h2, type Http2Server, type ServerHttp2Session } from "node:http2";
import type { Server } from "@grpc/grpc-js";

/** Time between the shutdown notice and the final GOAWAY: lets streams already on the wire land. */
export const ROTATION_GRACE_MS = 1000;

/** Opaque data on our GOAWAY, visible in client debug logs. */
const GOAWAY_DATA = Buffer.from("meshext_max_streams_per_connection");

/**
 * Hooks every HTTP/2 server the grpc-js Server bound so far. grpc-js keeps them in a private map
 * (1.14); if that field disappears the hook reports false and nothing is rotated.
 */
export function rotateConnections(server: Server, maxStreams: number, onRotate: () => void): boolean {
  const servers = (server as unknown as { http2Servers?: Map<Http2Server, unknown> }).http2Servers;
  if (!(servers instanceof Map) || maxStreams <= 0) return false;
  for (const http2Server of servers.keys()) {
    if ((http2Server as unknown as Record<symbol, boolean>)[HOOKED]) continue;
    (http2Server as unknown as Record<symbol, boolean>)[HOOKED] = true;
    http2Server.on("session", (session: ServerHttp2Session) => countStreams(session, maxStreams, onRotate));
  }
  return true;
}

const HOOKED = Symbol("meshext.rotation");

function countStreams(session: ServerHttp2Session, maxStreams: number, onRotate: () => void): void {
  let streams = 0;
  session.on("stream", () => {
    if (++streams !== maxStreams) return;
    onRotate();
    try {
      session.goaway(h2.NGHTTP2_NO_ERROR, 2 ** 31 - 1, GOAWAY_DATA);
    } catch {
      return; // already closing
    }
    const timer = setTimeout(() => {
      if (!session.closed && !session.destroyed) session.close();
    }, ROTATION_GRACE_MS);
    timer.unref();
  });
}
