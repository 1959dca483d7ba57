// PURE: ProcessingRequest → RequestFacts, and Decision → ProcessingResponse messages. The only
// place that knows how a decision looks on Envoy's wire (immediate_response, mutations, mode_override).
import type { Direction, RequestFacts, RespondDecision, HeaderEdits } from "../decision.js";
import type { CommonResponse, HttpHeaders, ProcessingResponse } from "../gen/envoy/service/ext_proc/v3/external_processor.js";
import { CommonResponse_ResponseStatus } from "../gen/envoy/service/ext_proc/v3/external_processor.js";
import { ProcessingMode_BodySendMode, ProcessingMode_HeaderSendMode } from "../gen/envoy/extensions/filters/http/ext_proc/v3/processing_mode.js";
import { headerMapToMap, isEmptyEdits, toHeaderMutation } from "./headers.js";

/** The attribute namespace Envoy uses for ext_proc attributes (the filter's canonical name). */
export const ATTRIBUTES_NAMESPACE = "envoy.filters.http.ext_proc";
export const PEER_URI_SAN_ATTRIBUTE = "connection.uri_san_peer_certificate";
export const SNI_ATTRIBUTE = "connection.requested_server_name";
/** Every attribute requestFacts reads: envoy.yaml lists exactly these in ext_proc `request_attributes`. */
export const REQUEST_ATTRIBUTES: readonly string[] = [PEER_URI_SAN_ATTRIBUTE, SNI_ATTRIBUTE];

/** gRPC status codes for local replies to gRPC clients, by HTTP status. */
const GRPC_STATUS_FOR_HTTP: Record<number, number> = { 400: 3, 401: 16, 403: 7, 404: 12, 429: 8, 503: 14, 504: 4 };

function attributeStrings(value: unknown): string[] {
  if (typeof value === "string") return value.split(",").map((s) => s.trim()).filter(Boolean);
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  return [];
}

export function requestFacts(
  headers: HttpHeaders,
  attributes: Record<string, Record<string, unknown> | undefined>,
  direction: Direction,
): RequestFacts {
  const map = headerMapToMap(headers.headers);
  const own = attributes[ATTRIBUTES_NAMESPACE] ?? {};
  const sni = own[SNI_ATTRIBUTE];
  return {
    direction,
    method: (map.get(":method") ?? "GET").toUpperCase(),
    path: map.get(":path") ?? "/",
    authority: map.get(":authority") ?? map.get("host") ?? "",
    scheme: map.get(":scheme") ?? "http",
    headers: map,
    peerUriSans: attributeStrings(own[PEER_URI_SAN_ATTRIBUTE]),
    ...(typeof sni === "string" && sni !== "" ? { sni } : {}),
    requestId: map.get("x-request-id"),
  };
}

/** CONTINUE with optional header edits (no body or trailer changes); the route cache is kept unless asked. */
function continueWith(edits: HeaderEdits | undefined, clearRouteCache = false): CommonResponse {
  return {
    status: CommonResponse_ResponseStatus.CONTINUE,
    headerMutation: isEmptyEdits(edits) ? undefined : toHeaderMutation(edits!),
    bodyMutation: undefined,
    trailers: undefined,
    clearRouteCache,
  };
}

/** Continue, with optional request-header edits; asks Envoy to skip the response phase when it is not needed. */
function buildContinueRequestHeaders(edits: HeaderEdits | undefined, skipResponsePhase: boolean, clearRouteCache = false): ProcessingResponse {
  return {
    response: {
      $case: "requestHeaders",
      requestHeaders: { response: continueWith(edits, clearRouteCache) },
    },
    modeOverride: skipResponsePhase
      ? {
          requestHeaderMode: ProcessingMode_HeaderSendMode.DEFAULT,
          responseHeaderMode: ProcessingMode_HeaderSendMode.SKIP,
          requestBodyMode: ProcessingMode_BodySendMode.NONE,
          responseBodyMode: ProcessingMode_BodySendMode.NONE,
          requestTrailerMode: ProcessingMode_HeaderSendMode.DEFAULT,
          responseTrailerMode: ProcessingMode_HeaderSendMode.DEFAULT,
        }
      : undefined,
  };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** The two edit-free replies are built once, frozen: most requests get one of them, so the transport encodes them once. */
const PLAIN_CONTINUE = deepFreeze({ skip: buildContinueRequestHeaders(undefined, true), keep: buildContinueRequestHeaders(undefined, false) });

/** Replies shared by every request that gets them (frozen, so their encoding never goes stale). */
export const SHARED_REPLIES: readonly ProcessingResponse[] = [PLAIN_CONTINUE.skip, PLAIN_CONTINUE.keep];

/**
 * Continue, with optional request-header edits; asks Envoy to skip the response phase when it is not needed,
 * and to clear its route cache when the edits rewrote :path or :authority.
 */
export function continueRequestHeaders(edits: HeaderEdits | undefined, skipResponsePhase: boolean, clearRouteCache = false): ProcessingResponse {
  if (isEmptyEdits(edits)) return skipResponsePhase ? PLAIN_CONTINUE.skip : PLAIN_CONTINUE.keep;
  return buildContinueRequestHeaders(edits, skipResponsePhase, clearRouteCache);
}

export function continueResponseHeaders(edits: HeaderEdits | undefined): ProcessingResponse {
  return {
    response: {
      $case: "responseHeaders",
      responseHeaders: { response: continueWith(edits) },
    },
  };
}

/** The pass-through reply of the matching kind for body and trailer phases. */
export function passThrough(phase: "requestBody" | "responseBody" | "requestTrailers" | "responseTrailers"): ProcessingResponse {
  if (phase === "requestBody") return { response: { $case: "requestBody", requestBody: {} } };
  if (phase === "responseBody") return { response: { $case: "responseBody", responseBody: {} } };
  if (phase === "requestTrailers") return { response: { $case: "requestTrailers", requestTrailers: {} } };
  return { response: { $case: "responseTrailers", responseTrailers: {} } };
}

/**
 * A local reply's headers as edits: the first value of a name is set, the others appended. Envoy applies each entry
 * of a set_headers list in turn, so two entries of one name without `append` leave only the last value.
 */
function localReplyEdits(headers: ReadonlyArray<readonly [string, string]>): HeaderEdits {
  const edits: HeaderEdits = { set: [], add: [], remove: [] };
  const seen = new Set<string>();
  for (const [name, value] of headers) {
    const key = name.toLowerCase();
    (seen.has(key) ? edits.add : edits.set).push([name, value]);
    seen.add(key);
  }
  return edits;
}

/** A local reply (deny, abort, rate limit). gRPC clients get a matching grpc-status. */
export function immediateResponse(decision: RespondDecision, isGrpcRequest: boolean, explainHeader: boolean): ProcessingResponse {
  const headers = localReplyEdits(decision.headers);
  if (explainHeader) headers.set.push(["x-meshext-decision", explainValue(decision)]);
  const grpc = isGrpcRequest ? (GRPC_STATUS_FOR_HTTP[decision.status] ?? 2) : undefined;
  return {
    response: {
      $case: "immediateResponse",
      immediateResponse: {
        status: { code: decision.status },
        headers: isEmptyEdits(headers) ? undefined : toHeaderMutation(headers),
        body: Buffer.from(decision.body, "utf8"),
        grpcStatus: grpc === undefined ? undefined : { status: grpc },
        details: `meshext_${decision.explain.action}`.replace(/[^A-Za-z0-9_-]/g, "_"),
      },
    },
  };
}

/** `<action>; kind=<kind>; policy=<name>; rule=<rule>`: what the explain header carries. */
export function explainValue(decision: RespondDecision): string {
  const e = decision.explain;
  const parts = [e.action, `kind=${e.kind}`];
  if (e.policy) parts.push(`policy=${e.policy}`);
  if (e.rule) parts.push(`rule=${e.rule}`);
  return parts.join("; ").replace(/[^\x20-\x7e]/g, "?");
}

/** Ask Envoy to extend the running message timer (needs max_message_timeout in the Envoy config). */
export function overrideMessageTimeout(timeoutMs: number): ProcessingResponse {
  return { overrideMessageTimeout: { seconds: Math.floor(timeoutMs / 1000), nanos: (timeoutMs % 1000) * 1_000_000 } };
}
