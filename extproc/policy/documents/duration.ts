// Go/Kubernetes duration strings as Kuma writes them ("100ms", "1m30s", "1.5h") → milliseconds.

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, "μs": 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;

/** Parses a Go duration; returns undefined when the text is not one. Negative durations are rejected. */
export function parseGoDurationMs(text: unknown): number | undefined {
  if (typeof text !== "string") return undefined;
  let pos = text[0] === "+" ? 1 : 0;
  // Go's time.ParseDuration: a bare "0" (after the sign) needs no unit.
  if (text.length === pos + 1 && text[pos] === "0") return 0;
  if (pos >= text.length) return undefined;
  let totalMs = 0;
  while (pos < text.length) {
    PART.lastIndex = pos;
    const m = PART.exec(text);
    if (!m) return undefined;
    totalMs += Number(m[1]) * UNIT_MS[m[2]!]!;
    pos = PART.lastIndex;
  }
  return totalMs;
}
