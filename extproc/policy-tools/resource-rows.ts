// Policies and Dataplanes from the REST API as table rows, in the columns kumactl shows for them.
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export const POLICY_HEADER = ["MESH", "KIND", "NAME", "TARGETREF", "ORIGIN", "AGE"] as const;
export const DATAPLANE_HEADER = ["MESH", "NAME", "ADDRESS", "INBOUNDS", "AGE"] as const;

export function policyRow(r: unknown, nowMs: number): string[] {
  const o = isObj(r) ? r : {};
  const spec = isObj(o.spec) ? o.spec : {};
  const ref = isObj(spec.targetRef) ? spec.targetRef : { kind: "Mesh" };
  const labels = isObj(o.labels) ? o.labels : {};
  const refText = [ref.kind, ref.name, isObj(ref.labels) || isObj(ref.tags) ? JSON.stringify(ref.labels ?? ref.tags) : undefined, ref.sectionName ? `[${ref.sectionName}]` : undefined].filter(Boolean).join(" ");
  return [String(o.mesh ?? ""), String(o.type ?? ""), String(o.name ?? ""), refText, String(labels["kuma.io/origin"] ?? "-"), age(o.creationTime, nowMs)];
}

export function dataplaneRow(r: unknown, nowMs: number): string[] {
  const o = isObj(r) ? r : {};
  const net = isObj(o.networking) ? o.networking : {};
  const inbounds = (Array.isArray(net.inbound) ? net.inbound : []).filter(isObj).map((i) => `${isObj(i.tags) ? i.tags["kuma.io/service"] : "?"}:${i.port}`);
  return [String(o.mesh ?? ""), String(o.name ?? ""), String(net.address ?? ""), inbounds.join(",") || (net.gateway ? "gateway" : "-"), age(o.creationTime, nowMs)];
}

/** `5s`, `3m`, `2h`, `4d` since an ISO time; `-` when unknown. */
export function age(iso: unknown, nowMs: number): string {
  const t = typeof iso === "string" ? Date.parse(iso) : NaN;
  if (Number.isNaN(t)) return "-";
  const s = Math.max(0, Math.round((nowMs - t) / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : s < 172_800 ? `${Math.round(s / 3600)}h` : `${Math.round(s / 86_400)}d`;
}
