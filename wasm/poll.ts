// PURE reading of the sidecar's `GET /drain` answer (UTF-8 bytes) into a DrainState.
// Body: {"draining": bool, "since": ISO|null, "deadline": ISO|null}; `since`/`deadline` may be absent.
import { DRAIN_FIELD_DEADLINE, DRAIN_FIELD_DRAINING, DRAIN_FIELD_SINCE } from "./contract";
import { DrainState } from "./drain";
import { JsonKind, JsonValue, parseJson } from "./json";
import { parseIsoMs } from "./time";

/** ISO field → ms; 0 for null/absent; -1 for anything else (malformed). */
function timeField(body: JsonValue, field: string): i64 {
  const value = body.get(field);
  if (value === null || value.kind == JsonKind.Null) return 0;
  if (value.kind != JsonKind.String) return -1;
  return parseIsoMs(value.start, value.length);
}

/**
 * The polled state, or null when the body is malformed. When the sidecar reports draining without a
 * `since`, the drain start is the previous one if we were already draining, else `polledAtMs`.
 * The body's bytes are rewritten while parsing (see json.ts).
 */
export function parseDrainBody(body: ArrayBuffer, previous: DrainState, polledAtMs: i64): DrainState | null {
  const json = parseJson(body);
  if (json === null) return null;
  const draining = json.get(DRAIN_FIELD_DRAINING);
  if (draining === null || draining.kind != JsonKind.Bool) return null;
  const sinceMs = timeField(json, DRAIN_FIELD_SINCE);
  const deadlineMs = timeField(json, DRAIN_FIELD_DEADLINE);
  if (sinceMs < 0 || deadlineMs < 0) return null;
  if (!draining.boolValue) return new DrainState(false, 0, 0, polledAtMs);
  let startMs = sinceMs;
  if (startMs == 0) startMs = previous.draining && previous.sinceMs > 0 ? previous.sinceMs : polledAtMs;
  return new DrainState(true, startMs, deadlineMs, polledAtMs);
}
