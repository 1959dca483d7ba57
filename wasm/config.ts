// Plugin configuration: fields, DEFAULTS and a pure parseConfig(text) that reports every violation.
// Never traps; the caller (filter.ts) logs one critical line and rejects the config on error.
import { DEFAULT_AUTHORITY, DEFAULT_CLUSTER, DEFAULT_HEALTH_PATH, DRAIN_PATH, DRAINING_HEADER } from "./contract";
import { E_CONFIG_NOT_JSON } from "./errors";
import { JsonKind, JsonValue, parseJson } from "./json";
import { decimal } from "./logging";

export class PluginConfig {
  /** Envoy cluster reaching the sidecar admin. @default "meshext_sidecar_admin" */
  pollCluster: string = DEFAULT_CLUSTER;
  /** Path of the drain state endpoint. @default "/drain" */
  pollPath: string = DRAIN_PATH;
  /** :authority of the poll request. @default "127.0.0.1:9902" */
  pollAuthority: string = DEFAULT_AUTHORITY;
  /** Tick period: how often the state is polled (once per period across all worker VMs). @default 1000 */
  pollPeriodMs: u32 = 1000;
  /** proxy_http_call timeout. @default 500 */
  pollTimeoutMs: u32 = 500;
  /** Health path answered by the filter. @default "/meshext/health" */
  healthPath: string = DEFAULT_HEALTH_PATH;
  /** true: answer 200 on the health path when serving; false: pass it through to the app. @default true */
  healthAnswerWhenServing: bool = true;
  /** Response header added (value "true") while draining; "" disables. @default "x-meshext-draining" */
  drainingHeader: string = DRAINING_HEADER;
  /** Ramp over which the share of closed HTTP/1 responses grows 0 → 1 after drain start; 0 = all at once. @default 0 */
  closeRampMs: u32 = 0;
  /** Force draining regardless of the poll (for control planes that push it). @default false */
  draining: bool = false;
}

export class ConfigResult {
  constructor(public config: PluginConfig | null, public error: string) {}
}

class Violations {
  text: string = "";
  add(field: string, message: string): void {
    if (this.text.length > 0) this.text += "; ";
    this.text += field + ": " + message;
  }
}

const TOP_KEYS: string[] = ["poll", "health", "drainingHeader", "closeRampMs", "draining"];
const POLL_KEYS: string[] = ["cluster", "path", "authority", "periodMs", "timeoutMs"];
const HEALTH_KEYS: string[] = ["path", "answerWhenServing"];

function checkKeys(object: JsonValue, allowed: string[], prefix: string, out: Violations): void {
  for (let i = 0; i < object.keys.length; i++) {
    const key = unchecked(object.keys[i]);
    if (!allowed.includes(key)) out.add(prefix + key, "unknown field");
  }
}

function readString(object: JsonValue, key: string, field: string, fallback: string, out: Violations): string {
  const value = object.get(key);
  if (value === null) return fallback;
  if (value.kind != JsonKind.String || value.stringValue.length == 0) {
    out.add(field, "expected a non-empty string");
    return fallback;
  }
  return value.stringValue;
}

function readPath(object: JsonValue, key: string, field: string, fallback: string, out: Violations): string {
  const path = readString(object, key, field, fallback, out);
  if (!path.startsWith("/")) out.add(field, "expected a path starting with '/'");
  return path;
}

function readBool(object: JsonValue, key: string, field: string, fallback: bool, out: Violations): bool {
  const value = object.get(key);
  if (value === null) return fallback;
  if (value.kind != JsonKind.Bool) { out.add(field, "expected true or false"); return fallback; }
  return value.boolValue;
}

function readInt(object: JsonValue, key: string, field: string, fallback: u32, lowest: u32, highest: u32, out: Violations): u32 {
  const value = object.get(key);
  if (value === null) return fallback;
  const n = value.numberValue;
  if (value.kind != JsonKind.Number || !value.integral || n < <f64>lowest || n > <f64>highest) {
    out.add(field, "expected an integer " + decimal(lowest) + ".." + decimal(highest));
    return fallback;
  }
  return <u32>n;
}

function isHeaderName(name: string): bool {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    const ok = (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c == 0x2d || c == 0x5f;
    if (!ok) return false;
  }
  return true;
}

function readHeaderName(object: JsonValue, out: Violations, fallback: string): string {
  const value = object.get("drainingHeader");
  if (value === null) return fallback;
  if (value.kind == JsonKind.Null) return "";
  if (value.kind != JsonKind.String || !isHeaderName(value.stringValue)) {
    out.add("drainingHeader", "expected a lowercase header name, \"\" or null");
    return fallback;
  }
  return value.stringValue;
}

function readObject(object: JsonValue, key: string, out: Violations): JsonValue | null {
  const value = object.get(key);
  if (value === null) return null;
  if (value.kind != JsonKind.Object) { out.add(key, "expected an object"); return null; }
  return value;
}

function isBlank(text: string): bool {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x20) return false;
  return true;
}

/** Empty or whitespace-only text means all defaults. */
export function parseConfig(text: string): ConfigResult {
  const config = new PluginConfig();
  const root = parseJson(text);
  if (root !== null && root.kind == JsonKind.Null && isBlank(text)) return new ConfigResult(config, "");
  if (root === null || root.kind != JsonKind.Object) return new ConfigResult(null, E_CONFIG_NOT_JSON);

  const out = new Violations();
  checkKeys(root, TOP_KEYS, "", out);
  const poll = readObject(root, "poll", out);
  if (poll !== null) {
    checkKeys(poll, POLL_KEYS, "poll.", out);
    config.pollCluster = readString(poll, "cluster", "poll.cluster", config.pollCluster, out);
    config.pollPath = readPath(poll, "path", "poll.path", config.pollPath, out);
    config.pollAuthority = readString(poll, "authority", "poll.authority", config.pollAuthority, out);
    config.pollPeriodMs = readInt(poll, "periodMs", "poll.periodMs", config.pollPeriodMs, 100, 3600000, out);
    config.pollTimeoutMs = readInt(poll, "timeoutMs", "poll.timeoutMs", config.pollTimeoutMs, 1, 60000, out);
  }
  const health = readObject(root, "health", out);
  if (health !== null) {
    checkKeys(health, HEALTH_KEYS, "health.", out);
    config.healthPath = readPath(health, "path", "health.path", config.healthPath, out);
    config.healthAnswerWhenServing = readBool(health, "answerWhenServing", "health.answerWhenServing", true, out);
  }
  config.drainingHeader = readHeaderName(root, out, config.drainingHeader);
  config.closeRampMs = readInt(root, "closeRampMs", "closeRampMs", config.closeRampMs, 0, 3600000, out);
  config.draining = readBool(root, "draining", "draining", false, out);

  if (out.text.length > 0) return new ConfigResult(null, out.text);
  return new ConfigResult(config, "");
}
