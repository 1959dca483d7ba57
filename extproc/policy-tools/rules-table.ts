// The `_rules` view of a dataplane (Kuma's InspectRules) as table rows: one per rule, with the inbound (or
// `outbound`), the policy kind, which clients or destinations it is for, a summary of its conf, and its origin.
import { confSummary } from "./conf-summary.js";

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter(isObj) : []);

export const RULES_HEADER = ["INBOUND", "KIND", "FOR", "CONF", "ORIGIN"] as const;

export function rulesRows(view: unknown): string[][] {
  const rows: string[][] = [];
  for (const r of list(isObj(view) ? view.rules : undefined)) {
    const kind = String(r.type ?? "");
    for (const group of list(r.fromRules)) {
      for (const rule of list(group.rules)) rows.push([inboundText(group.inbound), kind, `from ${matchersText(rule.matchers)}`, confSummary(rule.conf), originText(rule.origin)]);
    }
    for (const group of list(r.inboundRules)) {
      for (const rule of list(group.rules)) rows.push([inboundText(group.inbound), kind, "rules", confSummary(rule.conf), originText(rule.origin)]);
    }
    for (const rule of list(r.toRules)) rows.push(["outbound", kind, `to ${matchersText(rule.matchers)}`, confSummary(rule.conf), originText(rule.origin)]);
    for (const rule of list(r.toResourceRules)) {
      const meta = isObj(rule.resourceMeta) ? rule.resourceMeta : {};
      rows.push(["outbound", kind, `to ${meta.type ?? ""} ${meta.name ?? ""}`.trim(), confSummary(rule.conf), originText(rule.origin)]);
    }
  }
  return rows;
}

function inboundText(inbound: unknown): string {
  if (!isObj(inbound)) return "";
  const service = isObj(inbound.tags) ? inbound.tags["kuma.io/service"] : undefined;
  return `${inbound.name ? `${inbound.name} ` : ""}:${inbound.port ?? "?"}${service ? ` (${service})` : ""}`;
}

function matchersText(matchers: unknown): string {
  const m = list(matchers);
  return m.length === 0 ? "*" : m.map((x) => `${x.not ? "!" : ""}${x.key}=${x.value}`).join(",");
}

function originText(origin: unknown): string {
  return list(origin)
    .map((o) => (isObj(o.resourceMeta) ? `${o.resourceMeta.name}${typeof o.ruleIndex === "number" ? ` rules[${o.ruleIndex}]` : ""}` : String(o.name ?? "")))
    .join(", ");
}
