// Reads Prometheus text exposition (Envoy's /stats/prometheus, the sidecar's /metrics): sample lines into a map.

/** `name{labels}` → value, for every sample line (comments skipped); the key is the line's text before the value, an
 * empty label set (`name{}`, as Envoy writes it) dropped. */
export function promSamples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    const key = line.slice(0, at);
    out.set(key.endsWith("{}") ? key.slice(0, -2) : key, Number(line.slice(at + 1)));
  }
  return out;
}

/** The TYPE lines: metric name → counter/gauge/histogram. */
export function promTypes(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1]!, m[2]!);
  return out;
}
