// Who may call an admin route: each route declares its access; the guard decides per request.
// Secure by default: a route that declares nothing is "local" (loopback peers, or the admin token).
import { timingSafeEqual } from "node:crypto";

/**
 * - `public`: read-only and disclosing nothing sensitive (/metrics, /ready): answers any peer, so
 *   Prometheus and kubelet's probes reach it on the pod IP.
 * - `local`: changes state or discloses policy (/drain, /explain, /quitquitquit…): answers only a
 *   loopback peer, or a request carrying `Authorization: Bearer <--admin-token>`.
 */
export type AdminAccess = "public" | "local";

export const DEFAULT_ACCESS: AdminAccess = "local";

/** True for 127.0.0.0/8, ::1 and IPv4-mapped 127.x peers (what node reports as remoteAddress). */
export function isLoopbackPeer(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4)) return true;
  return address === "::1";
}

/** Constant-time check of an `Authorization: Bearer …` header against the configured token. */
export function hasAdminToken(authorization: string | undefined, token: string): boolean {
  if (!token || !authorization) return false;
  const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
  if (!match) return false;
  const given = Buffer.from(match[1]!);
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}

export type AccessVerdict = { allowed: true } | { allowed: false; reason: string };

export function checkAccess(
  access: AdminAccess,
  peer: { remoteAddress: string | undefined; authorization: string | undefined },
  adminToken: string,
): AccessVerdict {
  if (access === "public" || isLoopbackPeer(peer.remoteAddress) || hasAdminToken(peer.authorization, adminToken)) return { allowed: true };
  return {
    allowed: false,
    reason: adminToken
      ? "this endpoint answers only on loopback or with the admin token (Authorization: Bearer …)"
      : "this endpoint answers only on loopback (no --admin-token is set)",
  };
}
