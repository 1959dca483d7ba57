// HTTP helpers and the parent↔child messages shared by the control-plane scale bench and its child processes
// (bench/cp-scale-sidecars.ts holds long-polls, bench/cp-scale-prober.ts times heartbeats and GETs).
import { type Agent, request } from "node:http";

/** The `?wait=` each simulated sidecar's long-poll asks. */
export const LONG_POLL_WAIT = "30s";

export interface Reply {
  status: number;
  etag?: string;
}

/** One request; resolves once the whole reply body has been read (and dropped). */
export function send(agent: Agent, base: URL, method: string, path: string, headers: Record<string, string> = {}, body?: string, onSent?: () => void): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: base.hostname, port: base.port, method, path, headers: { ...headers, ...(body ? { "content-type": "application/json" } : {}) } }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, etag: res.headers.etag }));
      res.on("error", reject);
    });
    req.on("error", reject);
    if (onSent) req.once("finish", onSent);
    req.end(body);
  });
}

/** The text of GET `path` (for /metrics). */
export function getText(agent: Agent, base: URL, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request({ agent, host: base.hostname, port: base.port, path }, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve(body));
    }).on("error", reject).end();
  });
}

/** Parent → child: start measuring (discard what came before), stop measuring and report, or quit. */
export type ToChild = { type: "measure" } | { type: "report" } | { type: "quit" };

/** Child → parent. */
export type FromChild =
  | { type: "ready" }
  /** Long-polls sent so far (a sidecar process). */
  | { type: "armed"; sent: number }
  | { type: "result"; heartbeatMs?: number[]; getMs?: number[]; longPollAnswers?: number; errors: number };

/** What a child reads from argv[2]. */
export interface ChildArgs {
  baseUrl: string;
  /** Sidecar processes: how many sidecars this process plays. */
  sidecars: number;
  /** Prober: heartbeats spread over `totalSidecars` Dataplanes, once per heartbeatIntervalMs each. */
  totalSidecars: number;
  heartbeatIntervalMs: number;
  getsPerSecond: number;
  /** Sidecar processes: items per long-polled page. */
  pageSize: number;
}
