// One decision-log line (decision-log/record.ts) read back as what the engine decided it from: the request facts,
// the client identity (tags, certificate URIs, SNI) and the dataplane; or why the line cannot be replayed.
import type { RequestFacts } from "../decision.js";
import type { Outcome } from "../decision-log/record.js";
import { describedIdentity, type ClientIdentity } from "../policy/decide/identity.js";
import { tagSetKey } from "../policy/model/client.js";
import type { TagSet } from "../policy/model/types.js";

export interface Recorded {
  outcome: Outcome;
  status?: number;
  kind: string;
  policy?: string;
  rule?: string;
}

export interface ReplayInput {
  dataplane?: string;
  mesh?: string;
  facts: RequestFacts;
  /** How the client was identified, as recorded (undefined for outbound requests). */
  client?: { tags: string; source: string; spiffe?: string; sni?: string };
  before: Recorded;
  /** The record, for reports. */
  raw: Record<string, unknown>;
}

const OUTCOMES = new Set<string>(["allow", "delay", "deny", "shadow-deny", "abort", "rate-limit", "not-ready"]);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): v is string => typeof v === "string";

/** The line as a replay input, or `malformed` with why (not JSON, not a decision record). */
export function readRecord(line: string): ReplayInput | { malformed: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { malformed: "not JSON" };
  }
  return recordFrom(raw);
}

/** A parsed log line (or a record pushed to the control plane) as a replay input, or `malformed` with why. */
export function recordFrom(raw: unknown): ReplayInput | { malformed: string } {
  if (!isObj(raw)) return { malformed: "not a JSON object" };
  const r = raw;
  if ((r.direction !== "inbound" && r.direction !== "outbound") || !str(r.method) || !str(r.path) || !str(r.authority) || !str(r.outcome) || !OUTCOMES.has(r.outcome) || !str(r.kind)) {
    return { malformed: "not a decision record (direction, method, path, authority, outcome, kind)" };
  }
  // Straight assignments, no spreads: this runs once per replayed line.
  const headers = new Map<string, string>();
  if (isObj(r.headers)) for (const k in r.headers) if (str(r.headers[k])) headers.set(k.toLowerCase(), r.headers[k] as string);
  const facts: RequestFacts = { direction: r.direction, method: r.method, path: r.path, authority: r.authority, scheme: "http", headers, peerUriSans: NO_URIS };
  if (str(r.requestId)) facts.requestId = r.requestId;
  if (str(r.inbound)) facts.inbound = r.inbound;
  const before: Recorded = { outcome: r.outcome as Outcome, kind: r.kind };
  if (typeof r.status === "number") before.status = r.status;
  if (str(r.policy)) before.policy = r.policy;
  if (str(r.rule)) before.rule = r.rule;
  const input: ReplayInput = { facts, before, raw: r };
  if (str(r.dataplane)) input.dataplane = r.dataplane;
  if (str(r.mesh)) input.mesh = r.mesh;
  const c = r.client;
  if (isObj(c) && str(c.tags) && str(c.source)) {
    const client: NonNullable<ReplayInput["client"]> = { tags: c.tags, source: c.source };
    if (str(c.spiffe)) client.spiffe = c.spiffe;
    if (str(c.sni)) client.sni = c.sni;
    input.client = client;
  }
  return input;
}

const NO_URIS: readonly string[] = [];

/** Caches one identity object per recorded client, as the sidecar's own cache does (steps are kept on it). */
export class RecordedIdentities {
  private readonly byKey = new Map<string, ClientIdentity>();

  constructor(private readonly mesh: string) {}

  get(client: NonNullable<ReplayInput["client"]>): ClientIdentity {
    const key = `${client.source}\u0001${client.tags}\u0001${client.spiffe ?? ""}\u0001${client.sni ?? ""}`;
    let id = this.byKey.get(key);
    if (!id) {
      const found = identityOf(client, this.mesh);
      id = { ...found, key: tagSetKey(found.tags), ruleKey: undefined, steps: undefined };
      this.byKey.set(key, id);
    }
    return id;
  }
}

function identityOf(client: NonNullable<ReplayInput["client"]>, mesh: string): ClientIdentity {
  const sni = client.sni ? { sni: client.sni } : {};
  const source = client.source as ClientIdentity["source"];
  if (client.spiffe) return { ...describedIdentity(client.spiffe.split(","), mesh, client.sni), source };
  return { tags: tagsFromKey(client.tags), source, ignored: [], ...sni };
}

/** The inverse of tagSetKey: `k=v1|v2&k2=v3`. */
export function tagsFromKey(key: string): TagSet {
  const tags = new Map<string, Set<string>>();
  for (const part of key.split("&")) {
    const eq = part.indexOf("=");
    if (eq > 0) tags.set(part.slice(0, eq), new Set(part.slice(eq + 1).split("|")));
  }
  return tags;
}
