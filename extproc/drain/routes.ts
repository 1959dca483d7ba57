// Admin routes of the drain: GET /drain (the JSON contract with the wasm filter), POST /drain
// (start; ?wait=true answers once drained; ?mode=forever drains forever), GET /drain/prestop (POST
// /drain?wait=true for hooks), POST /quitquitquit (a Job's explicit exit) — all local-only — and the
// public, read-only GET /drain/wait, which starts nothing and answers once the drain is complete.
import { json, type AdminHandler, type AdminReply, type AdminServer } from "../admin/server.js";
import type { DrainController, DrainSnapshot } from "./controller.js";

/** The /drain body the wasm filter reads. Keep in step with wasm/ (the other side of the contract). */
export interface DrainStatusJson {
  draining: boolean;
  /** ISO time draining started, or null. */
  since: string | null;
  /** ISO time the wait ends at the latest, or null. */
  deadline: string | null;
}

export function drainStatusJson(s: DrainSnapshot): DrainStatusJson {
  return {
    draining: s.phase !== "serving",
    since: s.sinceMs === undefined ? null : new Date(s.sinceMs).toISOString(),
    deadline: s.deadlineMs === undefined ? null : new Date(s.deadlineMs).toISOString(),
  };
}

type Drain = Pick<DrainController, "snapshot" | "start" | "drainForever" | "quit" | "drained">;

const NO_STORE = { "cache-control": "no-store" };

/** Paths the routes answer on (inject renders hooks against them). */
export const DRAIN_PATHS = { status: "/drain", prestop: "/drain/prestop", wait: "/drain/wait", quit: "/quitquitquit" } as const;

/**
 * @param maxWaitMs bound on GET /drain/wait (public, so a peer cannot hold it open for longer)
 */
export function registerDrainRoutes(admin: Pick<AdminServer, "route">, drain: Drain, maxWaitMs: number): void {
  const status = (code: number, extra: Record<string, string> = {}): AdminReply =>
    json(code, drainStatusJson(drain.snapshot()), { ...NO_STORE, ...extra });

  const startAndMaybeWait =
    (trigger: string, alwaysWait: boolean): AdminHandler =>
    async (req) => {
      const mode = req.query.get("mode");
      if (mode !== null && mode !== "drain" && mode !== "forever") return json(400, { error: `mode must be "drain" or "forever", not ${JSON.stringify(mode)}` });
      if (mode === "forever") {
        void drain.drainForever(trigger);
        return status(202);
      }
      void drain.start(trigger);
      if (!alwaysWait && !isTrue(req.query.get("wait"))) return status(202);
      await Promise.race([drain.drained, req.closed]);
      // The servers close right after: do not leave this connection around as keep-alive.
      return status(200, { connection: "close" });
    };

  admin.route("GET", DRAIN_PATHS.status, () => status(200));
  admin.route("POST", DRAIN_PATHS.status, startAndMaybeWait("admin POST /drain", false));
  // Kubernetes httpGet hooks can only GET; this is POST /drain?wait=true for a preStop hook.
  admin.route("GET", DRAIN_PATHS.prestop, startAndMaybeWait("admin GET /drain/prestop", true));
  // A Job's app calls this when it is done (Istio's /quitquitquit): the sidecar and Envoy exit.
  admin.route("POST", DRAIN_PATHS.quit, () => {
    void drain.quit("admin POST /quitquitquit");
    return json(202, { quitting: true }, { ...NO_STORE, connection: "close" });
  });
  // Public and read-only: starts nothing, so a classic pod's Envoy container can wait in its preStop
  // (an httpGet hook reaches the pod IP, not loopback) for the drain its sibling's hook started.
  admin.route(
    "GET",
    DRAIN_PATHS.wait,
    async (req) => {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), maxWaitMs)));
      const outcome = await Promise.race([drain.drained.then(() => "drained" as const), timedOut, req.closed.then(() => "closed" as const)]);
      clearTimeout(timer);
      return json(outcome === "drained" ? 200 : 504, { drained: outcome === "drained" }, { ...NO_STORE, connection: "close" });
    },
    "public",
  );
}

function isTrue(v: string | null): boolean {
  return v !== null && (v === "" || v === "true" || v === "1");
}
