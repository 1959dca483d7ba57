// The embedded control plane: its own HTTP server (not the sidecar's admin port) wiring the durable store,
// dataplane lifecycle and long-poll notifier to the Kuma-shaped routes.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { splitHostPort } from "../host-port.js";
import { DEFAULT_KUMA_VERSION, type KumaVersion } from "../kuma-rest/kuma-version.js";
import type { Logger } from "../log.js";
import { CONTROL_PLANE_FLAGS } from "../config/control-plane.js";
import { DATAPLANE_TYPE } from "../kuma-rest/resources.js";
import { DataplaneRegistry } from "./dataplanes.js";
import { type DecisionSampleLimits, DecisionSamples } from "./decision-samples.js";
import { type ControlPlaneMetrics, createControlPlaneMetrics } from "./metrics.js";
import { ApiError, methodNotAllowed } from "./problems.js";
import { type ApiReply, route, type RouteContext } from "./routes.js";
import { DEFAULT_BODY_LIMITS, readBodyLimited, type BodyLimits } from "./safety.js";
import { ResourceStore } from "./store.js";
import { watchImplicitMeshes } from "./mesh-routes.js";
import { ChangeNotifier, isLongPoll } from "./watch.js";
import { BAD_TARGET_MESSAGE, requestUrl } from "../request-target.js";
import { PolicySetIndex } from "./policy-sets.js";

export interface ControlPlaneOptions {
  /** HOST:PORT to listen on; port 0 picks a free port. @default "127.0.0.1:5681" */
  listen: string;
  /** Directory of the durable store. */
  dataDir: string;
  /** When set, every write needs `Authorization: Bearer <token>`. @default "" */
  token?: string;
  /** @default 30000 */
  offlineTimeoutMs?: number;
  /** @default 72h */
  offlineGcAgeMs?: number;
  limits?: Partial<BodyLimits>;
  version?: string;
  /** The Kuma release this control plane emulates (reported as `basedOnKuma`). @default "2.14" */
  kumaVersion?: KumaVersion;
  /** Bounds of the decision records sidecars push. @default the --decision-samples-* flag defaults */
  decisionSamples?: Partial<DecisionSampleLimits>;
}

export interface RunningControlPlane {
  /** Base URL, e.g. http://127.0.0.1:5681 */
  url: string;
  address: AddressInfo;
  store: ResourceStore;
  dataplanes: DataplaneRegistry;
  stop(): Promise<void>;
}

export const DEFAULT_OFFLINE_TIMEOUT_MS = 30_000;
export const DEFAULT_OFFLINE_GC_AGE_MS = 72 * 3_600_000;

const flagDefault = (key: string) => CONTROL_PLANE_FLAGS.find((f) => f.key === key)!.default as number;
/** The flag table's defaults (config/control-plane.ts), for callers that start a control plane without flags. */
const DEFAULT_DECISION_SAMPLE_LIMITS: DecisionSampleLimits = { perDataplane: flagDefault("decisionSamplesPerDataplane"), maxBytes: flagDefault("decisionSamplesMaxBytes") };

export async function startControlPlane(opts: ControlPlaneOptions, log: Logger): Promise<RunningControlPlane> {
  const store = await ResourceStore.open(opts.dataDir, log);
  const notifier = new ChangeNotifier();
  store.on("change", (change) => notifier.notify(change.kind, change.mesh));
  watchImplicitMeshes(store, notifier);
  const dataplanes = new DataplaneRegistry(
    store,
    { offlineTimeoutMs: opts.offlineTimeoutMs ?? DEFAULT_OFFLINE_TIMEOUT_MS, offlineGcAgeMs: opts.offlineGcAgeMs ?? DEFAULT_OFFLINE_GC_AGE_MS },
    log,
  );
  const kumaVersion = opts.kumaVersion ?? DEFAULT_KUMA_VERSION;
  const decisionSamples = new DecisionSamples({ ...DEFAULT_DECISION_SAMPLE_LIMITS, ...opts.decisionSamples });
  store.on("change", (change) => {
    if (change.kind === DATAPLANE_TYPE.kind && change.op === "delete" && change.mesh !== undefined) decisionSamples.remove(change.mesh, change.name);
  });
  const policySets = new PolicySetIndex(store, notifier, kumaVersion);
  const ctx: RouteContext = {
    store,
    dataplanes,
    notifier,
    policySets,
    decisionSamples,
    token: opts.token ?? "",
    limits: { ...DEFAULT_BODY_LIMITS, ...opts.limits },
    version: opts.version ?? "0.1.0",
    kumaVersion,
  };
  const metrics = createControlPlaneMetrics({ notifier, store, dataplanes, policySets, decisionSamples });
  const server = createServer((req, res) => void handle(ctx, metrics, log, req, res));
  server.keepAliveTimeout = 5000;
  server.requestTimeout = 120_000;
  server.headersTimeout = 10_000;
  const address = await listen(server, opts.listen);
  await dataplanes.sweep();
  dataplanes.start();
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    address,
    store,
    dataplanes,
    async stop() {
      dataplanes.stop();
      notifier.close(); // long-polls answer 304 now instead of holding shutdown for up to a minute
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 1000).unref();
      });
      await store.flush();
    },
  };
}

async function handle(ctx: RouteContext, metrics: ControlPlaneMetrics, log: Logger, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = requestUrl(req.url, "http://control-plane");
  if (!url) {
    req.resume();
    return writeReply(res, { status: 400, body: new ApiError(400, "Bad Request", BAD_TARGET_MESSAGE).body() });
  }
  const method = req.method ?? "GET";
  const observe = metrics.startRequest(method, url, req.headers);
  const abandoned = new Promise<void>((resolve) => res.once("close", () => resolve()));
  let reply: ApiReply;
  try {
    // GET /metrics is read-only and needs no token, like Kuma's own metrics endpoint.
    if (url.pathname.replace(/\/+$/, "") === "/metrics") {
      if (method !== "GET") throw methodNotAllowed(method, url.pathname, ["GET"]);
      res.writeHead(200, { "content-type": metrics.registry.contentType });
      res.end(await metrics.registry.metrics());
      observe(200);
      return;
    }
    // A long-poll is taken in a few per turn: a thousand re-arming at once (after a change woke them) would
    // otherwise all be routed in the turn that read them, ahead of a heartbeat read in the same turn.
    if (isLongPoll(url, req.headers)) await ctx.notifier.slices.next();
    reply = await route(ctx, { method, url, headers: req.headers, body: () => readBodyLimited(req, ctx.limits.maxBodyBytes), abandoned });
  } catch (err) {
    if (err instanceof ApiError) {
      reply = { status: err.status, headers: err.headers, body: err.body() };
    } else {
      log.error({ err, method: req.method, path: url.pathname }, "control-plane request failed");
      // A full disk (or quota) is the server's storage, not a bug: 507, and the stored version is unchanged.
      const code = (err as NodeJS.ErrnoException).code;
      reply = code === "ENOSPC" || code === "EDQUOT"
        ? { status: 507, body: new ApiError(507, "Insufficient Storage", `the control plane's data directory is full: ${(err as Error).message}`).body() }
        : { status: 500, body: new ApiError(500, "Internal Server Error", (err as Error).message).body() };
    }
  }
  if (res.destroyed) return;
  writeReply(res, reply);
  observe(reply.status);
  log.debug({ method: req.method, path: url.pathname, status: reply.status }, "control-plane request");
}

/** Sends a route's reply: JSON bodies pretty-printed, a 413 closing the connection. */
function writeReply(res: ServerResponse, reply: ApiReply): void {
  const headers: Record<string, string> = { ...reply.headers };
  if (reply.body !== undefined || reply.bytes) headers["content-type"] = "application/json";
  // A refused body may still be streaming in: close instead of reading the rest of a hostile upload.
  if (reply.status === 413) headers.connection = "close";
  res.writeHead(reply.status, headers);
  res.end(reply.bytes ?? (reply.body === undefined ? undefined : JSON.stringify(reply.body, null, 2) + "\n"));
}

function listen(server: Server, hostPort: string): Promise<AddressInfo> {
  const { host, port } = splitHostPort(hostPort);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
