// The shapes of Kuma's `_rules` inspect answer (InspectRules in Kuma 2.14's api/openapi/specs/api.yaml; Kuma
// 3.0's api/openapi/specs/common/resource.yaml on its master branch drops `fromRules` and `toRules`) and
// Kuma's ResourceMetaToMeta, shared by the whole-answer view (inspect-rules.ts) and its per-inbound parts.
import type { Meta } from "./inspect.js";

export interface InboundRef {
  name?: string;
  port: number;
  /** Kuma 3.0 has no inbound tags: `null` there (Go's nil map), as its API server writes it. */
  tags: Record<string, string> | null;
}

export interface InboundRule {
  /** Absent for a catch-all rule. */
  match?: unknown;
  conf: unknown[];
  origin: Array<{ resourceMeta: Meta; ruleIndex: number }>;
}

export interface Rule {
  matchers: Array<{ key: string; value: string; not: boolean }>;
  conf: unknown;
  origin: Meta[];
}

export interface InspectRule {
  type: string;
  /** Up to 2.14 only. */
  fromRules?: Array<{ inbound: InboundRef; rules: Rule[] }>;
  inboundRules: Array<{ inbound: InboundRef; rules: InboundRule[] }>;
  toResourceRules: unknown[];
  /** Up to 2.14 only. */
  toRules?: unknown[];
  warnings: string[];
}

export interface InspectRules {
  httpMatches: Array<{ hash: string; match: unknown }>;
  resource: Meta;
  rules: InspectRule[];
}

/** Kuma's `ResourceMetaToMeta`: type, mesh, name and labels (`{}` when none); no `kri`. */
export function metaOf(r: { type: string; mesh: string; name: string; labels?: Record<string, string> }): Meta {
  return { type: r.type, mesh: r.mesh, name: r.name, labels: { ...(r.labels ?? {}) } };
}
