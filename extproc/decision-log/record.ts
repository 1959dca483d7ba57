// One decision-log line: which decisions are written (denials always, allows sampled) and the JSON
// record itself. Pure: the caller passes the clock, the random source and the header allow-list.
import type { Decision, RequestFacts } from "../decision.js";
import { xfccUris } from "../policy/decide/identity.js";

/** The `outcome` field: the action, with a MeshFaultInjection delay shown as `delay`. */
export type Outcome = "allow" | "delay" | "deny" | "shadow-deny" | "abort" | "rate-limit" | "not-ready";

export interface DecisionRecord {
  time: string;
  requestId?: string;
  /** The dataplane that decided (what `meshext policy what-if` replays a record for). */
  dataplane?: string;
  mesh?: string;
  /** The inbound Envoy named for the request, when it did. */
  inbound?: string;
  direction: string;
  method: string;
  path: string;
  authority: string;
  /** `spiffe`: the client's certificate URIs (peer certificate or XFCC), which 2.12+ rules match on; `sni` as sent. */
  client?: { tags: string; source: string; spiffe?: string; sni?: string };
  matched: string[];
  outcome: Outcome;
  status?: number;
  kind: string;
  policy?: string;
  rule?: string;
  reason: string;
  delayMs?: number;
  latencyMs: number;
  headers?: Record<string, string>;
}

export function outcomeOf(decision: Decision): Outcome {
  const action = decision.explain.action;
  if (action === "allow" && (decision.delayMs ?? 0) > 0) return "delay";
  return action;
}

/** Denials (every local reply) and shadow denies are always written; plain allows with probability `sample`. */
export function shouldWrite(decision: Decision, sample: number, random: () => number): boolean {
  if (decision.type === "respond" || decision.explain.action === "shadow-deny") return true;
  return sample >= 1 || (sample > 0 && random() < sample);
}

/** The record of one decision; only headers named in `headers` (lower case) are copied, and the path loses its
 * query string (tokens travel there) unless `withQuery`. Fields are assigned in this order (it is the line's
 * order) without spreads: this runs for every logged request. */
export function decisionRecord(facts: RequestFacts, decision: Decision, latencyMs: number, timeMs: number, headers: readonly string[], withQuery = false, dataplane?: { mesh: string; name: string }): DecisionRecord {
  const e = decision.explain;
  const audit = decision.audit?.();
  const record = { time: new Date(timeMs).toISOString() } as DecisionRecord;
  if (facts.requestId !== undefined) record.requestId = facts.requestId;
  if (dataplane) {
    record.dataplane = dataplane.name;
    record.mesh = dataplane.mesh;
  }
  if (facts.inbound !== undefined) record.inbound = facts.inbound;
  record.direction = facts.direction;
  record.method = facts.method;
  const query = withQuery ? -1 : facts.path.indexOf("?");
  record.path = query === -1 ? facts.path : facts.path.slice(0, query);
  record.authority = facts.authority;
  if (audit?.client) record.client = clientOf(audit.client, facts);
  record.matched = audit?.matched ?? (e.policy ? [`${e.kind}/${e.policy}${e.rule ? " " + e.rule : ""}`] : []);
  record.outcome = outcomeOf(decision);
  if (decision.type === "respond") record.status = decision.status;
  record.kind = e.kind;
  if (e.policy !== undefined) record.policy = e.policy;
  if (e.rule !== undefined) record.rule = e.rule;
  record.reason = e.reason;
  if (decision.delayMs) record.delayMs = decision.delayMs;
  record.latencyMs = Math.round(latencyMs * 1000) / 1000;
  if (headers.length > 0) {
    const picked: Record<string, string> = {};
    for (const name of headers) {
      const value = facts.headers.get(name);
      if (value !== undefined) picked[name] = value;
    }
    record.headers = picked;
  }
  return record;
}

/** The audit's client plus what the engine matched it by beyond tags: its certificate URIs and SNI. */
function clientOf(client: { tags: string; source: string }, facts: RequestFacts): NonNullable<DecisionRecord["client"]> {
  const out: NonNullable<DecisionRecord["client"]> = { tags: client.tags, source: client.source };
  const uris = client.source === "peer-cert" ? facts.peerUriSans : client.source === "xfcc" ? xfccUris(facts.headers.get("x-forwarded-client-cert") ?? "") : [];
  if (uris.length > 0) out.spiffe = uris.join(",");
  if (facts.sni !== undefined) out.sni = facts.sni;
  return out;
}
