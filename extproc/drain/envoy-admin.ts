// HTTP client for the few Envoy admin calls the drain needs: short retries, a hard deadline per call,
// no keep-alive (so it never holds the process open), failures reported through a callback.
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";

export type EnvoyAdminCall = "healthcheck_fail" | "drain_listeners" | "stats" | "quit";

export interface EnvoyAdminOptions {
  /** Base URL of Envoy admin, e.g. http://127.0.0.1:9901. */
  baseUrl: string;
  /** Whole-call deadline including retries, ms. @default 2000 */
  callTimeoutMs?: number;
  /** Attempts for POST calls. @default 3 */
  attempts?: number;
  /** Pause between attempts, doubled each time, ms. @default 100 */
  backoffMs?: number;
  /** Called once per call that failed after its retries. */
  onFailure?: (call: EnvoyAdminCall, err: Error) => void;
}

class HttpStatusError extends Error {
  constructor(readonly status: number, body: string) {
    super(`HTTP ${status}: ${body.slice(0, 200).trim()}`);
  }
}

export class EnvoyAdminClient {
  private readonly opts: Required<Omit<EnvoyAdminOptions, "onFailure">> & Pick<EnvoyAdminOptions, "onFailure">;

  constructor(options: EnvoyAdminOptions) {
    this.opts = { callTimeoutMs: 2000, attempts: 3, backoffMs: 100, ...options, baseUrl: options.baseUrl.replace(/\/+$/, "") };
  }

  /** POST /healthcheck/fail: Envoy enters its drain state (Connection: close, GOAWAY) and /ready turns 503. */
  async failHealthchecks(): Promise<void> {
    await this.call("healthcheck_fail", "POST", "/healthcheck/fail", this.opts.attempts);
  }

  /** POST /drain_listeners?graceful&inboundonly: graceful drain of inbound listeners only. */
  async drainListeners(): Promise<void> {
    await this.call("drain_listeners", "POST", "/drain_listeners?graceful&inboundonly", this.opts.attempts);
  }

  /**
   * POST /drain_listeners?inboundonly&graceful&skip_exit: drain inbound listeners gracefully and keep
   * them (drain-forever). Needs the inbound listener's `traffic_direction: INBOUND`.
   */
  async drainListenersForever(): Promise<void> {
    await this.call("drain_listeners", "POST", "/drain_listeners?inboundonly&graceful&skip_exit", this.opts.attempts);
  }

  /** POST /drain_listeners?inboundonly: the inbound listeners stop accepting at once (no graceful period). */
  async stopInboundListeners(): Promise<void> {
    await this.call("drain_listeners", "POST", "/drain_listeners?inboundonly", this.opts.attempts);
  }

  /** POST /quitquitquit: Envoy exits (used when a Job's app is done and Envoy is not our child). */
  async quit(): Promise<void> {
    await this.call("quit", "POST", "/quitquitquit", this.opts.attempts);
  }

  /**
   * Active downstream requests on the HTTP connection manager with this stat_prefix
   * (`http.<prefix>.downstream_rq_active`), or undefined when Envoy does not report the stat.
   * Counts requests, not connections: idle keep-alive connections do not show up here.
   */
  async downstreamRequestsActive(statPrefix: string): Promise<number | undefined> {
    const name = `http.${statPrefix}.downstream_rq_active`;
    const filter = encodeURIComponent(`^${escapeRegExp(name)}$`);
    const body = await this.call("stats", "GET", `/stats?format=json&filter=${filter}`, 1);
    return statValue(body, name);
  }

  private async call(call: EnvoyAdminCall, method: string, path: string, attempts: number): Promise<string> {
    const deadline = Date.now() + this.opts.callTimeoutMs;
    let lastErr: Error = new Error("no attempt made");
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const leftMs = deadline - Date.now();
      if (leftMs <= 0) break;
      try {
        return await send(method, this.opts.baseUrl + path, leftMs);
      } catch (err) {
        lastErr = err as Error;
        // A 4xx will not get better by asking again (wrong URL, old Envoy).
        if (lastErr instanceof HttpStatusError && lastErr.status < 500) break;
      }
      const pauseMs = Math.min(this.opts.backoffMs * 2 ** (attempt - 1), deadline - Date.now());
      if (attempt < attempts && pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
    }
    const err = new Error(`Envoy admin ${method} ${path}: ${lastErr.message}`);
    this.opts.onFailure?.(call, err);
    throw err;
  }
}

/** Reads one counter/gauge from Envoy's /stats?format=json body ({"stats":[{"name","value"}…]}). */
export function statValue(body: string, name: string): number | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    throw new Error(`Envoy /stats?format=json answered non-JSON: ${body.slice(0, 100)}`);
  }
  const stats = (doc as { stats?: unknown }).stats;
  if (!Array.isArray(stats)) return undefined;
  for (const s of stats as { name?: unknown; value?: unknown }[]) {
    if (s && s.name === name && typeof s.value === "number") return s.value;
  }
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function send(method: string, url: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = url.startsWith("https:") ? httpsRequest : httpRequest;
    const req = request(url, { method, agent: false, headers: { connection: "close" } }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        clearTimeout(timer);
        const body = Buffer.concat(chunks).toString("utf8");
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve(body);
        else reject(new HttpStatusError(status, body));
      });
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs}ms`)), timeoutMs);
    req.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end();
  });
}
