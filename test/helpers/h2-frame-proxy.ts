// A loopback TCP proxy in front of an h2c (prior knowledge) listener that reads the HTTP/2 frames going both ways:
// the GOAWAY and RST_STREAM frames Envoy sends, the stream ids whose HEADERS reached Envoy, and, on demand, holds
// what Envoy sends so that a test decides when the client reads it (the round trip of a loaded client, made exact).
import { connect, createServer, type Server, type Socket } from "node:net";

export interface GoAwayFrame {
  lastStreamId: number;
  code: number;
  /** The opaque data, as text. */
  debug: string;
  atMs: number;
}

export interface H2FrameProxy {
  /** http://127.0.0.1:<port> */
  url: string;
  /** GOAWAY frames Envoy sent, in order. */
  goaways: GoAwayFrame[];
  /** RST_STREAM frames Envoy sent. */
  resets: { streamId: number; code: number }[];
  /** Stream ids whose request HEADERS reached Envoy, in order. */
  requestStreams: number[];
  /** Keep what Envoy sends from now on instead of passing it to the client. */
  hold(): void;
  /** Whether the held bytes contain a GOAWAY frame. */
  heldGoAway(): boolean;
  /** Passes everything held to the client in one write, synchronously, and stops holding. */
  release(): void;
  /** Whether Envoy closed its side. */
  envoyClosed(): boolean;
  close(): Promise<void>;
}

const CLIENT_PREFACE_BYTES = 24;
const FRAME_HEADER_BYTES = 9;
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const GOAWAY = 0x7;

/** Calls `onFrame` for every complete frame fed to it (type, stream id, payload). */
function frameReader(skipBytes: number, onFrame: (type: number, streamId: number, payload: Buffer) => void) {
  let pending = Buffer.alloc(0);
  let skip = skipBytes;
  return (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    if (skip > 0) {
      const n = Math.min(skip, pending.length);
      pending = pending.subarray(n);
      skip -= n;
    }
    while (pending.length >= FRAME_HEADER_BYTES) {
      const length = pending.readUIntBE(0, 3);
      if (pending.length < FRAME_HEADER_BYTES + length) return;
      onFrame(pending[3]!, pending.readUInt32BE(5) & 0x7fffffff, pending.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + length));
      pending = pending.subarray(FRAME_HEADER_BYTES + length);
    }
  };
}

/** One client connection at a time (the tests use one HTTP/2 session per proxy). */
export async function startH2FrameProxy(targetPort: number): Promise<H2FrameProxy> {
  const goaways: GoAwayFrame[] = [];
  const resets: { streamId: number; code: number }[] = [];
  const requestStreams: number[] = [];
  let holding = false;
  let held: Buffer[] = [];
  let heldGoAway = false;
  let client: Socket | undefined;
  let upstreamClosed = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((c) => {
    client = c;
    const upstream = connect(targetPort, "127.0.0.1");
    sockets.add(c).add(upstream);
    const fromClient = frameReader(CLIENT_PREFACE_BYTES, (type, streamId) => {
      if (type === HEADERS && !requestStreams.includes(streamId)) requestStreams.push(streamId);
    });
    const fromEnvoy = frameReader(0, (type, streamId, payload) => {
      if (type === GOAWAY) {
        goaways.push({ lastStreamId: payload.readUInt32BE(0) & 0x7fffffff, code: payload.readUInt32BE(4), debug: payload.subarray(8).toString(), atMs: Date.now() });
        if (holding) heldGoAway = true;
      }
      if (type === RST_STREAM) resets.push({ streamId, code: payload.readUInt32BE(0) });
    });
    c.on("data", (d: Buffer) => {
      fromClient(d);
      upstream.write(d);
    });
    upstream.on("data", (d: Buffer) => {
      fromEnvoy(d);
      if (holding) held.push(d);
      else c.write(d);
    });
    upstream.on("close", () => {
      upstreamClosed = true;
      if (!holding) c.destroy();
    });
    c.on("close", () => upstream.destroy());
    c.on("error", () => {});
    upstream.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    goaways,
    resets,
    requestStreams,
    hold: () => {
      holding = true;
    },
    heldGoAway: () => heldGoAway,
    release: () => {
      holding = false;
      heldGoAway = false;
      const bytes = Buffer.concat(held);
      held = [];
      if (client && bytes.length > 0) client.write(bytes);
      if (upstreamClosed) client?.destroy();
    },
    envoyClosed: () => upstreamClosed,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
