// DataplaneLifecycle over HTTP: register with PUT /meshes/{mesh}/dataplanes/{name}, heartbeat with POST
// …/_heartbeat (embedded control plane), mark draining, DELETE on graceful exit. Against Kuma (no heartbeat
// endpoint: it tracks liveness through xDS) heartbeats stop after the first 404 and draining is reported the
// Kuma way, by re-PUTting the Dataplane with every inbound `state: NotReady`.
import type { DataplaneLifecycle } from "../dataplane-lifecycle.js";
import type { Logger } from "../log.js";
import { withJitter } from "./backoff.js";

/** The inbound port a dataplane built from tags registers (it has no real listener to name). */
export const PLACEHOLDER_INBOUND_PORT = 1;

export interface DataplaneIdentity {
  mesh: string;
  name: string;
  address: string;
  /** Inbound tags; kuma.io/service is required. */
  tags: Record<string, string>;
  /** Inbound port registered for the tags. @default 1 (placeholder when there is no real listener) */
  port?: number;
  labels?: Record<string, string>;
  /** A full Dataplane resource (from --dataplane-file) registered as-is instead of one built from the fields above. */
  document?: Record<string, unknown>;
}

export interface DataplaneClientOptions {
  baseUrl: string;
  token?: string;
  dataplane: DataplaneIdentity;
  heartbeatIntervalMs: number;
  /** @default 5000 */
  requestTimeoutMs?: number;
  log: Logger;
}

export function createDataplaneClient(opts: DataplaneClientOptions): HttpDataplaneClient {
  return new HttpDataplaneClient(opts);
}

export class HttpDataplaneClient implements DataplaneLifecycle {
  private timer: NodeJS.Timeout | undefined;
  private state: "online" | "draining" = "online";
  private heartbeatSupported = true;
  /** Set by deregister(): from then on nothing registers the dataplane again. */
  private leaving = false;
  /** PUTs in flight: deregister() waits for them, or a PUT landing after the DELETE would leave a ghost Dataplane. */
  private readonly puts = new Set<Promise<unknown>>();
  private readonly log: Logger;
  private readonly path: string;

  constructor(private readonly opts: DataplaneClientOptions) {
    const dp = opts.dataplane;
    this.path = `/meshes/${encodeURIComponent(dp.mesh)}/dataplanes/${encodeURIComponent(dp.name)}`;
    this.log = opts.log.child({ component: "dataplane-client", dataplane: `${dp.mesh}/${dp.name}` });
  }

  /** The Dataplane resource (Kuma universal shape) this sidecar registers. */
  resource(notReady = false): Record<string, unknown> {
    const dp = this.opts.dataplane;
    if (dp.document) return withInboundState(dp.document, notReady);
    return {
      type: "Dataplane",
      mesh: dp.mesh,
      name: dp.name,
      ...(dp.labels ? { labels: dp.labels } : {}),
      networking: { address: dp.address, inbound: [{ port: dp.port ?? PLACEHOLDER_INBOUND_PORT, tags: dp.tags, ...(notReady ? { state: "NotReady" } : {}) }] },
    };
  }

  async register(): Promise<void> {
    if (this.leaving) return;
    this.state = "online";
    try {
      await this.put(this.resource());
      this.log.info({ controlPlane: this.opts.baseUrl }, "dataplane registered");
    } catch (err) {
      // The control plane may be down while we start: heartbeats retry and register again once it answers.
      this.log.warn({ err: (err as Error).message }, "could not register the dataplane yet; heartbeats will retry");
    }
    this.schedule();
  }

  async markDraining(): Promise<void> {
    this.state = "draining";
    if (this.heartbeatSupported) await this.heartbeat();
    else if (!this.leaving) await this.put(this.resource(true)); // after deregister() a PUT would leave a ghost Dataplane
    this.log.info("dataplane reported draining");
  }

  async deregister(): Promise<void> {
    this.leaving = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    // Deleted after any registration still in flight (each bounded by the request timeout) has landed.
    await Promise.allSettled([...this.puts]);
    const res = await this.send("DELETE", this.path, undefined, [404]);
    this.log.info({ existed: res.status !== 404 }, "dataplane deregistered");
  }

  /** Stops heartbeating without deregistering (e.g. on a crash path). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (!this.heartbeatSupported) return;
    this.timer = setTimeout(() => {
      this.heartbeat()
        .catch((err: unknown) => this.log.warn({ err: (err as Error).message }, "heartbeat failed; will retry"))
        .finally(() => this.timer && this.schedule());
    }, withJitter(this.opts.heartbeatIntervalMs, 0.1));
    this.timer.unref();
  }

  private async heartbeat(): Promise<void> {
    if (this.leaving) return;
    const res = await this.send("POST", `${this.path}/_heartbeat`, { state: this.state }, [404, 405]);
    if (res.ok) return;
    if (res.status === 404 && !(await this.registered())) {
      // Unknown dataplane (garbage-collected, or the control plane lost its data): register again.
      if (this.leaving) return;
      this.log.warn("control plane does not know this dataplane; registering again");
      await this.put(this.resource(this.state === "draining"));
      return;
    }
    // The dataplane exists but there is no heartbeat endpoint: Kuma, which tracks liveness through xDS.
    this.heartbeatSupported = false;
    this.log.info("control plane has no heartbeat endpoint (Kuma?); liveness is left to it");
    if (this.state === "draining" && !this.leaving) await this.put(this.resource(true));
  }

  /** PUT of the Dataplane, tracked until it settles (see `puts`). */
  private put(resource: Record<string, unknown>): Promise<Response> {
    const sent = this.send("PUT", this.path, resource);
    this.puts.add(sent);
    void sent.then(
      () => this.puts.delete(sent),
      () => this.puts.delete(sent),
    );
    return sent;
  }

  private async registered(): Promise<boolean> {
    const res = await this.send("GET", this.path, undefined, [404]);
    return res.status !== 404;
  }

  private async send(method: string, path: string, body: unknown, okStatuses: number[] = []): Promise<Response> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.opts.token) headers.authorization = `Bearer ${this.opts.token}`;
    const res = await fetch(this.opts.baseUrl + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.opts.requestTimeoutMs ?? 5000),
    });
    const text = await res.text();
    if (res.ok || okStatuses.includes(res.status)) return res;
    throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 500)}`);
  }
}

/** A copy of a Dataplane document with every inbound marked NotReady (or as given). */
function withInboundState(doc: Record<string, unknown>, notReady: boolean): Record<string, unknown> {
  const net = (doc.networking ?? {}) as { inbound?: Array<Record<string, unknown>> };
  if (!notReady || !Array.isArray(net.inbound)) return doc;
  return { ...doc, networking: { ...net, inbound: net.inbound.map((ib) => ({ ...ib, state: "NotReady" })) } };
}
