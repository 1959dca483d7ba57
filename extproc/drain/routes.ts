// Admin routes of the drain: GET /drain (the JSON contract with the wasm filter), POST /drain
// (start; ?wait=true answers once drained) and GET /drain/prestop for Kubernetes httpGet hooks.
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

type Drain = Pick<DrainController, "snapshot" | "start" | "drained">;

const NO_STORE = { "cache-control": "no-store" };

export function registerDrainRoutes(admin: Pick<AdminServer, "route">, drain: Drain): void {
  const status = (code: number, extra: Record<string, string> = {}): AdminReply =>
    json(code, drainStatusJson(drain.snapshot()), { ...NO_STORE, ...extra });

  const startAndMaybeWait =
    (trigger: string, alwaysWait: boolean): AdminHandler =>
    async (req) => {
      void drain.start(trigger);
      if (!alwaysWait && !isTrue(req.query.get("wait"))) return status(202);
      await Promise.race([drain.drained, req.closed]);
      // The servers close right after: do not leave this connection around as keep-alive.
      return status(200, { connection: "close" });
    };

  admin.route("GET", "/drain", () => status(200));
  admin.route("POST", "/drain", startAndMaybeWait("admin POST /drain", false));
  // Kubernetes httpGet hooks can only GET; this is POST /drain?wait=true for a preStop hook.
  admin.route("GET", "/drain/prestop", startAndMaybeWait("admin GET /drain/prestop", true));
}

function isTrue(v: string | null): boolean {
  return v !== null && (v === "" || v === "true" || v === "1");
}
