// Parses flag durations to ms: a Go/Kubernetes duration as Kuma writes them ("250ms", "5s", "1m30s",
// "72h", parsed by the policy core's parser) or a bare number of milliseconds.
import { parseGoDurationMs } from "../policy/documents/duration.js";

export function parseDurationMs(raw: unknown): number | undefined {
  if (typeof raw === "number") return Number.isFinite(raw) && raw >= 0 ? Math.round(raw) : undefined;
  if (typeof raw !== "string") return undefined;
  const text = raw.trim();
  const ms = /^\d+(?:\.\d+)?$/.test(text) ? Number(text) : parseGoDurationMs(text);
  return ms === undefined ? undefined : Math.round(ms);
}
