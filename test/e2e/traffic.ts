// Steady-rate clients for the real-Envoy e2e test, no retries: a keep-alive HTTP/1.1 client (records each
// response's `connection` header) and an HTTP/2 client (records GOAWAY frames, reconnects after one).
import http from "node:http";
import http2 from "node:http2";

export interface Record {
  atMs: number;
  status: number; // 0: transport error
  error?: string;
  connectionClose?: boolean;
}

export interface Client {
  readonly records: Record[];
  readonly goawaysAtMs: number[];
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function loop(ratePerS: number, once: () => Promise<void>): { stop(): Promise<void> } {
  let running = true;
  const done = (async () => {
    while (running) {
      const started = Date.now();
      await once();
      await sleep(Math.max(0, 1000 / ratePerS - (Date.now() - started)));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await done;
    },
  };
}

export function http1Client(base: string, headers: http.OutgoingHttpHeaders, ratePerS: number): Client {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const records: Record[] = [];
  const once = () =>
    new Promise<void>((resolve) => {
      const req = http.get(new URL("/", base), { agent, headers, timeout: 10_000 }, (res) => {
        res.resume();
        res.on("end", () => {
          records.push({ atMs: Date.now(), status: res.statusCode ?? 0, connectionClose: /close/i.test(String(res.headers.connection ?? "")) });
          resolve();
        });
      });
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", (err: NodeJS.ErrnoException) => {
        records.push({ atMs: Date.now(), status: 0, error: err.code ?? err.message });
        resolve();
      });
    });
  const l = loop(ratePerS, once);
  return { records, goawaysAtMs: [], stop: async () => (await l.stop(), agent.destroy()) };
}

export function http2Client(base: string, headers: http2.OutgoingHttpHeaders, ratePerS: number): Client {
  const records: Record[] = [];
  const goawaysAtMs: number[] = [];
  let session: http2.ClientHttp2Session | undefined;
  const current = () => {
    if (!session || session.closed || session.destroyed) {
      const s = http2.connect(base);
      s.on("goaway", () => {
        goawaysAtMs.push(Date.now());
        if (session === s) session = undefined; // new requests go to a new connection; in-flight ones finish
      });
      s.on("error", () => undefined);
      session = s;
    }
    return session;
  };
  const once = () =>
    new Promise<void>((resolve) => {
      let status = 0;
      const req = current().request({ ":path": "/", ...headers });
      req.setTimeout(10_000, () => req.close(http2.constants.NGHTTP2_CANCEL));
      req.on("response", (h) => (status = Number(h[":status"])));
      req.on("data", () => undefined);
      req.on("end", () => {
        records.push({ atMs: Date.now(), status });
        resolve();
      });
      req.on("error", (err: NodeJS.ErrnoException) => {
        records.push({ atMs: Date.now(), status: 0, error: err.code ?? err.message });
        resolve();
      });
    });
  const l = loop(ratePerS, once);
  return { records, goawaysAtMs, stop: async () => (await l.stop(), session?.close()) };
}
