// The sidecar's basic admin routes: GET /metrics (Prometheus text) and GET /ready. Both are public:
// read-only, for Prometheus and kubelet's probes on the pod IP.
import type { Registry } from "prom-client";
import type { Readiness } from "../readiness.js";
import { json, type AdminServer } from "./server.js";

export function registerBasicRoutes(admin: AdminServer, registry: Registry, readiness: Readiness): void {
  admin.route("GET", "/metrics", async () => ({
    status: 200,
    headers: { "content-type": registry.contentType },
    body: await registry.metrics(),
  }), "public");
  admin.route("GET", "/ready", () =>
    readiness.ready ? json(200, { ready: true }) : json(503, { ready: false, notReady: readiness.reasons() }),
    "public",
  );
}
