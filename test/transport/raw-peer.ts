// A raw HTTP/2 peer on a TCP socket for the gRPC server tests: it sends the preface and one request, records the
// GOAWAY frames it is sent and whether the server ended the connection, and never closes or answers anything
// itself (a client that ignores GOAWAY, or one that went away without a word).
import { connect, type Socket } from "node:net";

export interface RawPeer {
  socket: Socket;
  /** lastStreamId of each GOAWAY received, in order. */
  goaways: number[];
  /** True once the server has ended its side of the connection. */
  ended(): boolean;
}

/** HPACK literal header field without indexing, new name (RFC 7541 §6.2.2), for short ASCII names and values. */
function literal(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)]);
}

/** One HTTP/2 frame (RFC 9113 §4.1): type, flags, stream id and payload. */
export function frame(type: number, flags: number, streamId: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}

/** Connects to 127.0.0.1:`port` and sends one complete POST to `path` (HEADERS with END_STREAM) on stream 1. */
export function rawPeer(port: number, path: string): RawPeer {
  // allowHalfOpen: the server ending its side does not end ours, as with a peer that went away without a word
  const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
  socket.on("error", () => {});
  const goaways: number[] = [];
  let ended = false;
  let buffered = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 9 && buffered.length >= 9 + buffered.readUIntBE(0, 3)) {
      const length = buffered.readUIntBE(0, 3);
      if (buffered[3] === 0x7) goaways.push(buffered.readUInt32BE(9) & 0x7fffffff);
      buffered = buffered.subarray(9 + length);
    }
  });
  socket.on("end", () => (ended = true));
  socket.write(Buffer.concat([connectionStart(), frame(0x1, 0x1 | 0x4, 1, grpcRequestHeaders(path))])); // HEADERS, END_STREAM | END_HEADERS
  return { socket, goaways, ended: () => ended };
}

/** The client connection preface and an empty SETTINGS frame: what a client sends before its first stream. */
export function connectionStart(): Buffer {
  return Buffer.concat([Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), frame(0x4, 0, 0, Buffer.alloc(0))]);
}

/** The HPACK block of a gRPC POST to `path`. */
export function grpcRequestHeaders(path: string): Buffer {
  return Buffer.concat([
    literal(":method", "POST"), literal(":scheme", "http"), literal(":authority", "peer"), literal(":path", path),
    literal("content-type", "application/grpc"),
  ]);
}
