// One short line for a policy conf in tables: the action of a MeshTrafficPermission, the rate of a MeshRateLimit,
// the faults of a MeshFaultInjection, the rules of a MeshHTTPRoute; anything else as compact JSON, cut to a width.
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export const SUMMARY_CHARS = 70;

export function confSummary(conf: unknown): string {
  return cut(special(conf) ?? JSON.stringify(conf) ?? "");
}

function special(conf: unknown): string | undefined {
  if (Array.isArray(conf)) return conf.map((c) => special(c) ?? JSON.stringify(c)).join("; ");
  if (!isObj(conf)) return undefined;
  const parts: string[] = [];
  if (typeof conf.action === "string") parts.push(conf.action);
  for (const key of ["allow", "deny", "allowWithShadowDeny"]) if (Array.isArray(conf[key])) parts.push(`${key} ${(conf[key] as unknown[]).map(matchText).join(", ")}`);
  const http = isObj(conf.local) && isObj(conf.local.http) ? conf.local.http : undefined;
  if (http && isObj(http.requestRate)) parts.push(`${http.requestRate.num} requests per ${http.requestRate.interval}${http.disabled ? " (disabled)" : ""}`);
  if (Array.isArray(conf.http)) {
    for (const f of conf.http.filter(isObj)) {
      if (isObj(f.abort)) parts.push(`abort ${f.abort.httpStatus} at ${f.abort.percentage}%`);
      if (isObj(f.delay)) parts.push(`delay ${f.delay.value} at ${f.delay.percentage}%`);
      if (isObj(f.responseBandwidth)) parts.push(`bandwidth ${f.responseBandwidth.limit} at ${f.responseBandwidth.percentage}%`);
    }
  }
  if (Array.isArray(conf.rules)) {
    for (const r of conf.rules.filter(isObj)) {
      const m = Array.isArray(r.matches) ? r.matches.map((x) => (isObj(x) && isObj(x.path) ? `${x.path.type} ${x.path.value}` : JSON.stringify(x))).join(" | ") : "*";
      const filters = isObj(r.default) && Array.isArray(r.default.filters) ? r.default.filters.map((f) => (isObj(f) ? String(f.type) : "?")) : [];
      parts.push(`${m} → ${filters.join(", ") || "no filters"}`);
    }
  }
  return parts.length ? parts.join("; ") : undefined;
}

function matchText(m: unknown): string {
  if (isObj(m) && isObj(m.spiffeID)) return `${m.spiffeID.type} ${m.spiffeID.value}`;
  return JSON.stringify(m);
}

function cut(text: string): string {
  return text.length <= SUMMARY_CHARS ? text : text.slice(0, SUMMARY_CHARS - 1) + "…";
}
