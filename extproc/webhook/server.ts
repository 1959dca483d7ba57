// The webhook's HTTPS server: POST /inject answers AdmissionReviews (admission.ts), GET /healthz
// answers once serving, GET /metrics has the review counts. The certificate and key are files (a mounted Secret) read again whenever
// either changes, so a rotated certificate is served to new connections without a restart; a
// half-written or mismatched pair keeps the last good one.
import { readFile, stat } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { createSecureContext } from "node:tls";
import { Counter, type Registry } from "prom-client";
import type { Logger } from "../log.js";
import { BAD_TARGET_MESSAGE, requestUrl } from "../request-target.js";
import { type AdmissionContext, BadReview, review } from "./admission.js";

/** Largest AdmissionReview body read (the API server's own request limit is 3 MiB). */
export const MAX_REVIEW_BYTES = 6 * 1024 * 1024;
export const INJECT_PATH = "/inject";

export interface WebhookServerOptions {
  listen: string;
  certFile: string;
  keyFile: string;
  certCheckIntervalMs: number;
  /** Built per request: a --patches directory is read again each time, so a changed ConfigMap applies. */
  context: () => Promise<AdmissionContext>;
  log: Logger;
  registry?: Registry;
}

export interface WebhookServer {
  readonly address: string;
  /** Checks the certificate files now (the timer does it every certCheckIntervalMs). */
  reloadCertificate(): Promise<boolean>;
  close(): Promise<void>;
}

async function readPair(certFile: string, keyFile: string): Promise<{ cert: Buffer; key: Buffer; stamp: string }> {
  const [c, k] = await Promise.all([stat(certFile), stat(keyFile)]);
  const [cert, key] = await Promise.all([readFile(certFile), readFile(keyFile)]);
  return { cert, key, stamp: `${c.mtimeMs}:${c.size}:${c.ino}/${k.mtimeMs}:${k.size}:${k.ino}` };
}

function readBody(req: import("node:http").IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_REVIEW_BYTES) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

export async function startWebhookServer(opts: WebhookServerOptions): Promise<WebhookServer> {
  const { log } = opts;
  const reviews = opts.registry
    ? new Counter({ name: "meshext_webhook_reviews_total", help: "AdmissionReviews answered by the webhook, by result.", labelNames: ["result"], registers: [opts.registry] })
    : undefined;
  let pair = await readPair(opts.certFile, opts.keyFile);
  const server: Server = createServer({ cert: pair.cert, key: pair.key }, (req, res) => {
    const send = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
    };
    const url = requestUrl(req.url, "https://webhook");
    if (!url) return send(400, { error: BAD_TARGET_MESSAGE });
    if (req.method === "GET" && url.pathname === "/healthz") return send(200, { status: "serving" });
    if (req.method === "GET" && url.pathname === "/metrics" && opts.registry) {
      const registry = opts.registry;
      void registry.metrics().then((text) => res.writeHead(200, { "content-type": registry.contentType }).end(text));
      return;
    }
    if (url.pathname !== INJECT_PATH) return send(404, { error: `no route ${url.pathname}; AdmissionReviews go to POST ${INJECT_PATH}` });
    if (req.method !== "POST") return send(405, { error: `${INJECT_PATH} takes POST` });
    void (async () => {
      const raw = await readBody(req);
      if (raw === undefined) return send(413, { error: `body over ${MAX_REVIEW_BYTES} bytes` });
      let body: unknown;
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch (err) {
        reviews?.inc({ result: "bad_request" });
        return send(400, { error: `body is not JSON: ${(err as Error).message}` });
      }
      try {
        const outcome = await review(body, await opts.context());
        reviews?.inc({ result: outcome.result });
        const r = outcome.review.response;
        log.info({ uid: r.uid, result: outcome.result, ...(outcome.message ? { reason: outcome.message } : {}) }, "admission review");
        send(200, outcome.review);
      } catch (err) {
        if (err instanceof BadReview) {
          reviews?.inc({ result: "bad_request" });
          return send(400, { error: err.message });
        }
        throw err;
      }
    })().catch((err: unknown) => {
      log.error({ err: (err as Error).message }, "admission review failed");
      if (!res.headersSent) send(500, { error: "internal error" });
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;

  async function reloadCertificate(): Promise<boolean> {
    let next;
    try {
      next = await readPair(opts.certFile, opts.keyFile);
    } catch (err) {
      log.warn({ err: (err as Error).message }, "cannot read the TLS certificate files; keeping the current certificate");
      return false;
    }
    if (next.stamp === pair.stamp) return false;
    try {
      createSecureContext({ cert: next.cert, key: next.key }); // throws for a key that does not match, or a half-written file
    } catch (err) {
      // A rotation caught between its two writes, or a key that does not match: try again next time.
      log.warn({ err: (err as Error).message }, "the TLS certificate files do not make a usable pair; keeping the current certificate");
      return false;
    }
    pair = next;
    server.setSecureContext({ cert: next.cert, key: next.key });
    log.info({ certFile: opts.certFile }, "TLS certificate reloaded");
    return true;
  }
  const timer = setInterval(() => void reloadCertificate(), opts.certCheckIntervalMs);
  timer.unref();

  const m = /^(.*):(\d+)$/.exec(opts.listen);
  const host = (m?.[1] ?? "").replace(/^\[(.*)\]$/, "$1");
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(Number(m?.[2] ?? 0), host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const a = server.address() as AddressInfo;
  return {
    address: `${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}`,
    reloadCertificate,
    close: () =>
      new Promise<void>((done) => {
        clearInterval(timer);
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
