// The literals shared with the TypeScript sidecar; mirrored 1:1 in wasm/contract.json (a test keeps them equal).
// Imports nothing: both the filter and the no-op module may read it.

/** Sidecar admin endpoint polled for the drain state. */
export const DRAIN_PATH: string = "/drain";
/** JSON fields of the `GET /drain` body: `{"draining": bool, "since": ISO|null, "deadline": ISO|null}`. */
export const DRAIN_FIELD_DRAINING: string = "draining";
export const DRAIN_FIELD_SINCE: string = "since";
export const DRAIN_FIELD_DEADLINE: string = "deadline";

/** Envoy cluster that reaches the sidecar admin (127.0.0.1:9902 by default). */
export const DEFAULT_CLUSTER: string = "meshext_sidecar_admin";
export const DEFAULT_AUTHORITY: string = "127.0.0.1:9902";
/** Health path answered by the filter; namespaced so it never collides with the app's routes. */
export const DEFAULT_HEALTH_PATH: string = "/meshext/health";

/** Response header marking responses served while draining (the default; config may rename or disable it). */
export const DRAINING_HEADER: string = "x-meshext-draining";
export const DRAINING_HEADER_VALUE: string = "true";
/**
 * Private response header asking the Lua shim (envoy.yaml) to drain this connection after the response:
 * `Connection: close` on HTTP/1.x, GOAWAY on HTTP/2 and 3. The shim removes it; the default name (config may rename it).
 */
export const CLOSE_HEADER: string = "x-meshext-close";
export const CLOSE_HEADER_VALUE: string = "drain";

/** Health replies: bodies and the local-reply details Envoy logs as %RESPONSE_CODE_DETAILS%. */
export const HEALTH_BODY_DRAINING: string = "{\"status\":\"draining\"}";
export const HEALTH_BODY_SERVING: string = "{\"status\":\"serving\"}";
export const HEALTH_DETAILS_DRAINING: string = "meshext_drain_health_draining";

/** Metric names as they appear on /stats/prometheus (Envoy strips the `wasmcustom.` namespace). */
export const METRIC_DRAINING: string = "meshext_drain_draining";
export const METRIC_STARTED_SECONDS: string = "meshext_drain_started_seconds";
export const METRIC_DEADLINE_SECONDS: string = "meshext_drain_deadline_seconds";
export const METRIC_CLOSE_RESPONSES: string = "meshext_drain_close_responses_total";
export const METRIC_HEALTH_REFUSALS: string = "meshext_drain_health_refusals_total";
export const METRIC_POLL_SUCCESSES: string = "meshext_drain_poll_successes_total";
export const METRIC_POLL_ERRORS: string = "meshext_drain_poll_errors_total";
/** Label encoded in the name (`..._total_reason=malformed`); extracted by stats_tags regex `(_reason=([a-z]+))`. */
export const METRIC_REASON_LABEL: string = "_reason=";

/** Values of the poll-error `reason` label. */
export const POLL_ERROR_DISPATCH: string = "dispatch";
export const POLL_ERROR_RESET: string = "reset";
export const POLL_ERROR_STATUS: string = "status";
export const POLL_ERROR_MALFORMED: string = "malformed";
