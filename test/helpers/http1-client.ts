// A raw HTTP/1.1 keep-alive client on one TCP socket: sends requests one after another and reports each response's
// status, headers and whether the server closed the connection after it — what fetch() hides.
import { connect, type Socket } from "node:net";

export interface RawResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string | undefined>;
  body: string;
}

export interface Http1Connection {
  /** Sends one request (keep-alive unless `headers` say otherwise) and reads its response. */
  request(path: string, headers?: Record<string, string>, method?: string): Promise<RawResponse>;
  /** Resolves once the server has closed the connection (FIN or reset). */
  closed: Promise<void>;
  isClosed(): boolean;
  destroy(): void;
}

export async function openHttp1(port: number, host = "127.0.0.1"): Promise<Http1Connection> {
  const socket: Socket = connect({ port, host });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  let buffer = Buffer.alloc(0);
  let ended = false;
  let wake: (() => void) | undefined;
  const closed = new Promise<void>((resolve) => {
    const done = () => {
      ended = true;
      wake?.();
      resolve();
    };
    socket.once("end", done);
    socket.once("close", done);
    socket.on("error", () => {});
  });
  socket.on("data", (d: Buffer) => {
    buffer = Buffer.concat([buffer, d]);
    wake?.();
  });
  const more = () => new Promise<void>((resolve) => (wake = resolve));

  async function readResponse(): Promise<RawResponse> {
    let headEnd: number;
    while ((headEnd = buffer.indexOf("\r\n\r\n")) < 0) {
      if (ended) throw new Error(`connection closed before a response (${buffer.length} bytes read)`);
      await more();
    }
    const head = buffer.subarray(0, headEnd).toString("latin1").split("\r\n");
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? "")?.[1] ?? NaN);
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const at = line.indexOf(":");
      const name = line.slice(0, at).trim().toLowerCase();
      const value = line.slice(at + 1).trim();
      headers[name] = headers[name] !== undefined ? `${headers[name]}, ${value}` : value;
    }
    buffer = buffer.subarray(headEnd + 4);
    let body: Buffer;
    if (headers["transfer-encoding"]?.includes("chunked")) {
      const parts: Buffer[] = [];
      for (;;) {
        let lineEnd: number;
        while ((lineEnd = buffer.indexOf("\r\n")) < 0) {
          if (ended) throw new Error("connection closed inside a chunk size");
          await more();
        }
        const size = parseInt(buffer.subarray(0, lineEnd).toString("latin1"), 16);
        while (buffer.length < lineEnd + 2 + size + 2) {
          if (ended) throw new Error("connection closed inside a chunk");
          await more();
        }
        parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
        buffer = buffer.subarray(lineEnd + 2 + size + 2);
        if (size === 0) break;
      }
      body = Buffer.concat(parts);
    } else {
      const length = Number(headers["content-length"] ?? 0);
      while (buffer.length < length) {
        if (ended) throw new Error("connection closed inside a body");
        await more();
      }
      body = buffer.subarray(0, length);
      buffer = buffer.subarray(length);
    }
    return { status, headers, body: body.toString("utf8") };
  }

  return {
    closed,
    isClosed: () => ended,
    destroy: () => socket.destroy(),
    async request(path, headers = {}, method = "GET") {
      const lines = [`${method} ${path} HTTP/1.1`, `host: 127.0.0.1:${port}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), "", ""];
      socket.write(lines.join("\r\n"));
      return readResponse();
    },
  };
}
