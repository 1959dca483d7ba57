// The sidecar's settings: one table of flags with their defaults (the only place defaults live),
// and the typed SidecarConfig they resolve to (derived from the table, field for field).
import { ConfigError, type FlagSpec, type FlagValues, flagWithSource, type ParsedArgs, pinnedKumaVersion, resolveConfig } from "./flags.js";
import { checkPodFlags, POD_FLAGS } from "./pod.js";

export const SIDECAR_FLAGS = [
  { key: "config", flag: "config", type: "path", default: "", help: "YAML or JSON file of flag values (keys are flag names)." },
  { key: "grpcListen", flag: "grpc-listen", type: "hostport", default: "127.0.0.1:9001", help: "Address of the ext_proc gRPC server." },
  { key: "grpcSocket", flag: "grpc-socket", type: "path", default: "", help: "Also serve gRPC on this Unix socket path." },
  { key: "adminListen", flag: "admin-listen", type: "hostport", default: "127.0.0.1:9902", help: "Admin HTTP: /metrics and /ready answer any peer; /drain, /explain and the other routes only loopback peers or --admin-token holders." },
  { key: "adminToken", flag: "admin-token", type: "string", default: "", help: "Bearer token that opens the local-only admin routes (/drain, /explain…) to non-loopback callers; empty: loopback only. Prefer MESHEXT_ADMIN_TOKEN from a Secret over the command line." },
  { key: "logLevel", flag: "log-level", type: "enum", values: ["trace", "debug", "info", "warn", "error", "fatal", "silent"], default: "info", help: "Log level of the JSON log lines on stdout." },
  // policy decisions
  { key: "policies", flag: "policies", type: "path", default: "", help: "Directory of Kuma policy YAML/JSON files to load and follow (instead of a control plane)." },
  { key: "allowInvalidPolicies", flag: "allow-invalid-policies", type: "bool", default: false, help: "With --policies: load the valid documents even when some are rejected at start. Without it a rejected document at the first load keeps the sidecar not ready (answering per --before-first-sync) until it is fixed; later rejections always keep that policy's last good version." },
  { key: "controlPlane", flag: "control-plane", type: "url", default: "", help: "Kuma (or embedded) control plane REST API URL to fetch policies from." },
  { key: "controlPlaneToken", flag: "control-plane-token", type: "string", default: "", help: "Bearer token for the control plane API." },
  { key: "controlPlaneMaxListBytes", flag: "control-plane-max-list-bytes", type: "int", default: 32 << 20, min: 1024, help: "Most bytes read from the control plane in one sync (every kind's list, all pages together): a larger answer fails the sync and the last good set stays." },
  { key: "pollIntervalMs", flag: "poll-interval", type: "duration", default: 5000, min: 100, help: "How often policies are fetched from the control plane (jitter added)." },
  { key: "policyCacheFile", flag: "policy-cache-file", type: "path", default: "", help: "File holding the last good policy set, used when the control plane is down at start; empty disables it." },
  { key: "kumaVersion", flag: "kuma-version", type: "string", default: "", help: "Kuma release whose policy semantics to follow (2.5 to 2.14, e.g. 2.14 or 2.14.3, or 3.0: a preview of Kuma's unreleased main branch). Empty: the version the --control-plane reports at GET /, else 2.14." },
  { key: "beforeFirstSync", flag: "before-first-sync", type: "enum", values: ["allow", "deny"], default: "deny", help: "Decision for requests that arrive before any policy set is loaded." },
  { key: "mesh", flag: "mesh", type: "string", default: "default", help: "Mesh of this dataplane." },
  { key: "dataplaneFile", flag: "dataplane-file", type: "path", default: "", help: "Kuma Dataplane resource (universal YAML) describing this dataplane." },
  { key: "dataplaneFileCheckMs", flag: "dataplane-file-check-interval", type: "duration", default: 2000, min: 100, help: "How often --dataplane-file is checked for changes; changed labels, tags or inbounds re-select the policy set." },
  { key: "dataplaneName", flag: "dataplane-name", type: "string", default: "", help: "Dataplane name (default: the host name)." },
  { key: "dataplaneAddress", flag: "dataplane-address", type: "string", default: "127.0.0.1", help: "Address the dataplane registers with." },
  { key: "dataplaneTags", flag: "dataplane-tags", type: "string", default: "", help: "Inbound tags k=v,k=v (kuma.io/service is required) when no --dataplane-file is given." },
  { key: "trustKumaTagsHeader", flag: "trust-kuma-tags-header", type: "bool", default: false, help: "Take client tags from x-kuma-tags (spoofable without mTLS)." },
  { key: "explainHeader", flag: "explain-header", type: "bool", default: false, help: "Add x-meshext-decision to denied responses, naming the deciding policy." },
  { key: "messageTimeoutMs", flag: "message-timeout", type: "duration", default: 200, help: "Envoy ext_proc message_timeout; longer fault delays send override_message_timeout first." },
  { key: "maxMessageTimeoutMs", flag: "max-message-timeout", type: "duration", default: 0, help: "Envoy ext_proc max_message_timeout, as the Envoy in front of this sidecar sets it (envoy/envoy.yaml sets 5s: pass --max-message-timeout 5s with it). 0, the safe default for an Envoy that does not set it: delays are capped below --message-timeout and counted." },
  { key: "maxStreamsPerConnection", flag: "max-streams-per-connection", type: "int", default: 0, min: 0, help: "Ask Envoy to reconnect (graceful GOAWAY) after this many ext_proc streams on one HTTP/2 connection; 0 (the default) never does: through a real Envoy rotation failed ~1 % of requests and saved none (README, rapid-reset)." },
  { key: "heartbeatIntervalMs", flag: "heartbeat-interval", type: "duration", default: 10000, min: 100, help: "How often the dataplane heartbeats to the control plane." },
  // decision log (docs: README "Decision log")
  { key: "decisionLog", flag: "decision-log", type: "string", default: "", help: "Write one JSON line per decision to `stdout` or to this file path; empty: off." },
  { key: "decisionLogSample", flag: "decision-log-sample", type: "ratio", default: 1, help: "Share of allowed requests logged, 0 to 1 (local replies — deny, abort, rate limit, not ready — and shadow denies are always logged)." },
  { key: "decisionLogHeaders", flag: "decision-log-headers", type: "string", default: "", help: "Comma-separated request header names to log; no header is logged unless listed." },
  { key: "decisionLogQuery", flag: "decision-log-query", type: "bool", default: false, help: "Log request paths with their query string (off: the query string, where tokens travel, is cut)." },
  { key: "decisionLogMaxBytes", flag: "decision-log-max-bytes", type: "int", default: 100 * 1024 * 1024, min: 4096, help: "Rotate the decision-log file when the next write would pass this size (PATH → PATH.1 → …)." },
  { key: "decisionLogMaxFiles", flag: "decision-log-max-files", type: "int", default: 3, min: 1, help: "Rotated decision-log files kept (PATH.1 … PATH.N)." },
  { key: "decisionLogBufferBytes", flag: "decision-log-buffer-bytes", type: "int", default: 4 * 1024 * 1024, min: 1024, help: "Decision-log bytes held while the writer catches up; lines past it are dropped and counted (meshext_decision_log_dropped_total)." },
  { key: "decisionLogPush", flag: "decision-log-push", type: "bool", default: false, help: "Also send a bounded sample of the decision records to the --control-plane (POST …/dataplanes/{name}/_decision-samples), for its dry runs' what-if; off: no record leaves the sidecar. The records are those --decision-log-sample, -headers and -query select; --decision-log may stay off." },
  { key: "decisionLogPushMaxRecords", flag: "decision-log-push-max-records", type: "int", default: 500, min: 1, help: "Most records sent per --decision-log-push-interval: a uniform sample of the interval's records (reservoir sampling); the rest are counted as dropped (sampled_out)." },
  { key: "decisionLogPushIntervalMs", flag: "decision-log-push-interval", type: "duration", default: 10000, min: 100, help: "How often the sampled records are sent; a failed send drops them (counted), it is not retried." },
  { key: "decisionLogPushBatchBytes", flag: "decision-log-push-batch-bytes", type: "int", default: 256 * 1024, min: 1024, help: "Largest POST body: a sample larger than this goes in several; one record larger than it is dropped (too_large). Keep it under the control plane's --max-body-bytes." },
  // drain
  { key: "envoyAdmin", flag: "envoy-admin", type: "url", default: "", help: "Envoy admin URL (e.g. http://127.0.0.1:9901); empty: no Envoy calls." },
  { key: "inboundStatPrefix", flag: "inbound-stat-prefix", type: "string", default: "inbound", help: "stat_prefix of Envoy's inbound HTTP connection manager (for in-flight requests)." },
  { key: "drainMinMs", flag: "drain-min", type: "duration", default: 5000, help: "Minimum time to stay draining." },
  { key: "drainTimeMs", flag: "drain-time", type: "duration", default: 30000, help: "Maximum time to stay draining." },
  { key: "drainListeners", flag: "drain-listeners", type: "bool", default: false, help: "Also call Envoy's /drain_listeners?graceful&inboundonly." },
  { key: "exitOnSigterm", flag: "exit-on-sigterm", type: "bool", default: false, help: "A first SIGTERM/SIGINT exits at once (deregister, stop Envoy if ours) instead of draining. meshext inject sets it for native sidecars: kubelet signals them only after the app has exited (after pod deletion, their preStop already drains forever; after a Job's app completes, there is nothing to drain)." },
  { key: "envoyKillGraceMs", flag: "envoy-kill-grace", type: "duration", default: 5000, help: "With `meshext run`: time between SIGTERM and SIGKILL to Envoy." },
  ...POD_FLAGS,
] as const satisfies readonly FlagSpec[];

/** The sidecar's resolved settings (durations in ms: the keys say so). */
export type SidecarConfig = FlagValues<typeof SIDECAR_FLAGS>;

/** Resolves the sidecar's flags into a typed config (throws ConfigError on bad values). */
export function loadSidecarConfig(argv: readonly string[], env: NodeJS.ProcessEnv): { config: SidecarConfig; parsed: ParsedArgs } {
  const { config, parsed } = resolveConfig(SIDECAR_FLAGS, argv, env);
  return { config: checkSidecarConfig(config, parsed), parsed };
}

/**
 * The checks that span sidecar flags; throws ConfigError naming them (and where each value came from, given `parsed`).
 * `controlPlaneImplied`: the command supplies the control plane itself (`meshext up`).
 */
export function checkSidecarConfig<C extends SidecarConfig>(config: C, parsed?: Pick<ParsedArgs, "sources">, controlPlaneImplied = false): C {
  const flag = (key: (typeof SIDECAR_FLAGS)[number]["key"]) => (parsed ? flagWithSource(parsed, SIDECAR_FLAGS.find((f) => f.key === key)!) : `--${SIDECAR_FLAGS.find((f) => f.key === key)!.flag}`);
  if (config.drainMinMs > config.drainTimeMs) {
    throw new ConfigError(`${flag("drainMinMs")} (${config.drainMinMs}ms) must not exceed ${flag("drainTimeMs")} (${config.drainTimeMs}ms)`);
  }
  for (const name of decisionLogHeaderNames(config)) {
    if (!HEADER_NAME.test(name)) throw new ConfigError(`--decision-log-headers: ${JSON.stringify(name)} is not a header name (letters, digits and !#$%&'*+-.^_\`|~; comma-separated)`);
  }
  pinnedKumaVersion(config.kumaVersion);
  checkPodFlags(config);
  if (config.decisionLogPush && !config.controlPlane && !controlPlaneImplied) {
    throw new ConfigError(`${flag("decisionLogPush")} needs --control-plane: the records are sent to it`);
  }
  if (config.policies && config.controlPlane) {
    throw new ConfigError(`${flag("policies")} and ${flag("controlPlane")} are exclusive: pick one policy source`);
  }
  return config;
}

/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** --decision-log-headers as lower-case names, in the order given, without duplicates. */
export function decisionLogHeaderNames(config: Pick<SidecarConfig, "decisionLogHeaders">): string[] {
  const names = config.decisionLogHeaders.split(",").map((h) => h.trim().toLowerCase()).filter(Boolean);
  return [...new Set(names)];
}
