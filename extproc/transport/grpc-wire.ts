// gRPC over HTTP/2, the parts that are bytes and codes: status codes, length-prefixed message framing and
// the grpc-message percent-encoding. PURE: no sockets (grpc-server.ts does the I/O).
// Wire format: https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md

/** The gRPC status codes this server sends (grpc/doc/statuscodes.md). */
export const GrpcStatus = {
  OK: 0,
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
} as const;
export type GrpcStatusCode = (typeof GrpcStatus)[keyof typeof GrpcStatus];

/** A failure that ends one call with this status; the server and its other calls go on. */
export class GrpcError extends Error {
  constructor(readonly code: GrpcStatusCode, readonly details: string) {
    super(details);
  }
}

/** Each message on the wire: 1 byte compressed flag, 4 bytes big-endian length, then the message. */
export const MESSAGE_PREFIX_BYTES = 5;

/** The frame of one uncompressed message. */
export function frameMessage(message: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(MESSAGE_PREFIX_BYTES + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, MESSAGE_PREFIX_BYTES);
  return frame;
}

/**
 * Cuts a call's DATA into whole messages, however HTTP/2 split or joined them. A message arriving in one
 * chunk (the usual case) is handed over as a view of that chunk, without a copy.
 */
export class MessageReader {
  /** Bytes of an unfinished message (or of its prefix), kept across chunks. */
  private pending: Buffer | undefined;

  constructor(private readonly maxMessageBytes: number) {}

  /** The whole messages completed by `chunk`; throws GrpcError on a message this server will not read. */
  push(chunk: Buffer): Buffer[] {
    let bytes = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    const messages: Buffer[] = [];
    while (bytes.length >= MESSAGE_PREFIX_BYTES) {
      const compressed = bytes[0]!;
      const length = bytes.readUInt32BE(1);
      // We never advertise a grpc-accept-encoding, so a client must not compress (PROTOCOL-HTTP2.md: INTERNAL).
      if (compressed !== 0) throw new GrpcError(GrpcStatus.INTERNAL, `compressed message (flag ${compressed}) without a negotiated grpc-encoding`);
      if (length > this.maxMessageBytes) {
        throw new GrpcError(GrpcStatus.RESOURCE_EXHAUSTED, `received message larger than max (${length} vs. ${this.maxMessageBytes})`);
      }
      const end = MESSAGE_PREFIX_BYTES + length;
      if (bytes.length < end) break;
      messages.push(bytes.subarray(MESSAGE_PREFIX_BYTES, end));
      bytes = bytes.subarray(end);
    }
    if (bytes.length > 0) this.pending = Buffer.from(bytes); // own copy: the chunk's buffer may be reused
    return messages;
  }

  /** Bytes of a message still incomplete (at the end of the request this is a truncated message). */
  get bufferedBytes(): number {
    return this.pending?.length ?? 0;
  }
}

/** grpc-message: UTF-8, with bytes outside printable ASCII and '%' written as %XX. */
export function encodeGrpcMessage(details: string): string {
  let out = "";
  for (const byte of Buffer.from(details, "utf8")) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** The inverse of encodeGrpcMessage (malformed escapes are kept as they are). */
export function decodeGrpcMessage(encoded: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    const hex = encoded[i] === "%" ? encoded.slice(i + 1, i + 3) : "";
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(encoded[i]!, "utf8"));
  }
  return Buffer.from(bytes).toString("utf8");
}
