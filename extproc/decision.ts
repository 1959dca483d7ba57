// The seam between the gRPC transport and the policy engine: what the transport knows about a
// request (RequestFacts) and what it must do with it (Decision). No I/O and no proto types here.

export type Direction = "inbound" | "outbound";

export interface RequestFacts {
  direction: Direction;
  /** `:method`, upper case. */
  method: string;
  /** `:path` including the query string. */
  path: string;
  /** `:authority` (the destination for outbound requests). */
  authority: string;
  scheme: string;
  /** Request headers, keys lower-case; repeated headers joined with ",". Pseudo-headers included. */
  headers: ReadonlyMap<string, string>;
  /** URI SANs of the downstream peer certificate (ext_proc attribute connection.uri_san_peer_certificate). */
  peerUriSans: readonly string[];
  /** TLS SNI of the downstream connection (ext_proc attribute connection.requested_server_name), if sent. */
  sni?: string;
  /** x-request-id when present, for logs. */
  requestId?: string;
  /** The Dataplane inbound (name, or port as text) whose Envoy listener took the request, when Envoy says so. */
  inbound?: string;
}

/** Header edits. Values are plain strings; the transport turns them into raw_value bytes. */
export interface HeaderEdits {
  set: Array<[string, string]>;
  add: Array<[string, string]>;
  remove: string[];
}

/** Closed set of actions; used as the `action` metric label (bounded cardinality). */
export type DecisionAction = "allow" | "deny" | "shadow-deny" | "abort" | "rate-limit" | "not-ready";

/** Policy kinds (or "none"); used as the `kind` metric label. */
export type DecidingKind = "MeshTrafficPermission" | "MeshFaultInjection" | "MeshRateLimit" | "MeshHTTPRoute" | "none";

export interface Explanation {
  action: DecisionAction;
  kind: DecidingKind;
  /** Name of the policy that decided, when one did. */
  policy?: string;
  /** Which rule of that policy, e.g. "from[1]" or "to[0].rules[2]". */
  rule?: string;
  /** Human-readable why, for logs and /explain. */
  reason: string;
}

/** What the decision log records beyond the Explanation. */
export interface DecisionAudit {
  /** The client's tags as `k=v` pairs (the identity cache's key) and where they came from. */
  client?: { tags: string; source: string };
  /** Policies that matched, in evaluation order: `Kind/name from[i]` (inbound) or `MeshHTTPRoute/name to[i]…` (outbound). */
  matched: string[];
}

interface DecisionBase {
  /** Hold the reply this long before sending it (MeshFaultInjection delay). */
  delayMs?: number;
  explain: Explanation;
  /**
   * Set by the policy engine only when asked (PolicyEngineOptions.audit); built only when called, so decisions
   * cost almost nothing extra with the log on but this one sampled out, and nothing with the log off.
   */
  audit?: () => DecisionAudit;
}

/** Let the request through, possibly with header edits on the request and/or the response. */
export interface ContinueDecision extends DecisionBase {
  type: "continue";
  requestHeaders?: HeaderEdits;
  /** Edits to apply in the response_headers phase; when absent the response phase can be skipped. */
  responseHeaders?: HeaderEdits;
  /** The request edits change :path or :authority (a MeshHTTPRoute URLRewrite): Envoy must pick the route again. */
  clearRouteCache?: boolean;
}

/** Answer locally (deny, abort, rate limit): Envoy sends this response and skips the upstream. */
export interface RespondDecision extends DecisionBase {
  type: "respond";
  status: number;
  body: string;
  headers: Array<[string, string]>;
}

export type Decision = ContinueDecision | RespondDecision;

/** What the transport calls for each request. Must not throw; must be fast (no I/O). */
export interface Decider {
  decide(facts: RequestFacts): Decision;
}

/** The decider used before a policy engine is wired: everything is allowed. */
export const ALLOW_ALL: Decider = {
  decide: () => ({ type: "continue", explain: { action: "allow", kind: "none", reason: "no policy engine configured" } }),
};
