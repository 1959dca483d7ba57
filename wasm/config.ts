// Plugin configuration: fields, DEFAULTS and a pure parseConfig(bytes) that reports every violation.
// Never traps; the caller (root.ts) logs one critical line and rejects the config on error.
import { ascii, Writer } from "./abi/writer";
import { CLOSE_HEADER, DEFAULT_AUTHORITY, DEFAULT_CLUSTER, DEFAULT_HEALTH_PATH, DRAIN_PATH, DRAINING_HEADER } from "./contract";
import { E_CONFIG_NOT_JSON } from "./errors";
import { JsonKind, JsonValue, parseJson } from "./json";

/** Text values are UTF-8 bytes, ready for the host. */
export class PluginConfig {
  /** Envoy cluster reaching the sidecar admin. @default "meshext_sidecar_admin" */
  pollCluster: ArrayBuffer = ascii(DEFAULT_CLUSTER);
  /** Path of the drain state endpoint. @default "/drain" */
  pollPath: ArrayBuffer = ascii(DRAIN_PATH);
  /** :authority of the poll request. @default "127.0.0.1:9902" */
  pollAuthority: ArrayBuffer = ascii(DEFAULT_AUTHORITY);
  /** Tick period: how often the state is polled (once per period across all worker VMs). @default 1000 */
  pollPeriodMs: u32 = 1000;
  /** proxy_http_call timeout. @default 500 */
  pollTimeoutMs: u32 = 500;
  /** Health path answered by the filter. @default "/meshext/health" */
  healthPath: ArrayBuffer = ascii(DEFAULT_HEALTH_PATH);
  /** true: answer 200 on the health path when serving; false: pass it through to the app. @default true */
  healthAnswerWhenServing: bool = true;
  /** Response header added (value "true") while draining; empty disables. @default "x-meshext-draining" */
  drainingHeader: ArrayBuffer = ascii(DRAINING_HEADER);
  /** Private header (value "drain") on responses after which the connection should close, any protocol; read and removed by the Lua shim. Empty disables. @default "x-meshext-close" */
  closeHeader: ArrayBuffer = ascii(CLOSE_HEADER);
  /** Ramp over which the share of responses asked to close grows 0 → 1 after drain start; 0 = all at once. @default 0 */
  closeRampMs: u32 = 0;
  /** Force draining regardless of the poll (for control planes that push it). @default false */
  draining: bool = false;
}

/** Violations, written "field: expected …" and "; "-separated into the caller's line. */
class Problems {
  count: i32 = 0;
  constructor(public out: Writer) {}

  /** Starts an entry with its field name (`prefix.` when in a section); the caller adds the rest. */
  field(prefix: string): Writer {
    if (this.count++ > 0) this.out.byte(0x3b).byte(0x20); // "; "
    this.out.text(prefix);
    if (prefix.length > 0) this.out.byte(0x2e);
    return this.out;
  }

  /** "<field>: expected <what>" */
  expected(prefix: string, key: string, what: string): Writer {
    return this.field(prefix).text(key).text(": expected ").text(what);
  }
}

/** One object of the configuration (the top level, "poll", "health"): typed reads with defaults. */
class Section {
  constructor(public object: JsonValue | null, public prefix: string, public problems: Problems) {}

  /** After every read: members nobody asked for are unknown fields. */
  finish(): void {
    const object = this.object;
    let member: JsonValue | null = object !== null ? object.first : null;
    while (member !== null) {
      if (!member.read) this.problems.field(this.prefix).bytes(member.keyStart, member.keyLength).text(": unknown field");
      member = member.next;
    }
  }

  get(key: string): JsonValue | null {
    const object = this.object;
    return object === null ? null : object.get(key);
  }

  wrong(key: string, what: string): void {
    this.problems.expected(this.prefix, key, what);
  }

  /** A nested object, or a section reading nothing when absent or wrong. */
  section(key: string): Section {
    let value = this.get(key);
    if (value !== null && value.kind != JsonKind.Object) {
      this.wrong(key, "an object");
      value = null;
    }
    return new Section(value, key, this.problems);
  }

  string(key: string, fallback: ArrayBuffer): ArrayBuffer {
    const value = this.get(key);
    if (value === null) return fallback;
    if (value.kind != JsonKind.String || value.length == 0) {
      this.wrong(key, "a non-empty string");
      return fallback;
    }
    return value.bytes();
  }

  path(key: string, fallback: ArrayBuffer): ArrayBuffer {
    const path = this.string(key, fallback);
    if (path.byteLength == 0 || load<u8>(changetype<usize>(path)) != 0x2f) this.wrong(key, "a path starting with '/'");
    return path;
  }

  bool(key: string, fallback: bool): bool {
    const value = this.get(key);
    if (value === null) return fallback;
    if (value.kind != JsonKind.Bool) { this.wrong(key, "true or false"); return fallback; }
    return value.boolValue;
  }

  int(key: string, fallback: u32, lowest: u32, highest: u32): u32 {
    const value = this.get(key);
    if (value === null) return fallback;
    const n = value.numberValue;
    if (value.kind != JsonKind.Number || !value.integral || n < <f64>lowest || n > <f64>highest) {
      this.problems.expected(this.prefix, key, "an integer ").decimal(lowest).byte(0x2e).byte(0x2e).decimal(highest); // ".."
      return fallback;
    }
    return <u32>n;
  }

  /** A lowercase header name; null or "" → empty (disabled). */
  headerName(key: string, fallback: ArrayBuffer): ArrayBuffer {
    const value = this.get(key);
    if (value === null) return fallback;
    if (value.kind == JsonKind.Null) return new ArrayBuffer(0);
    if (value.kind != JsonKind.String || !isHeaderName(value.start, value.length)) {
      this.wrong(key, "a lowercase header name, \"\" or null");
      return fallback;
    }
    return value.bytes();
  }
}

function isHeaderName(name: usize, length: i32): bool {
  for (let i = 0; i < length; i++) {
    const c = <i32>load<u8>(name + <usize>i);
    const ok = (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c == 0x2d || c == 0x5f;
    if (!ok) return false;
  }
  return true;
}

function isBlank(text: ArrayBuffer): bool {
  for (let i = 0; i < text.byteLength; i++) if (load<u8>(changetype<usize>(text) + <usize>i) > 0x20) return false;
  return true;
}

/**
 * Empty or whitespace-only text means all defaults. On error returns null after writing every
 * violation ("field: expected …", "; "-separated) to `problems`. The bytes are rewritten (json.ts).
 */
export function parseConfig(text: ArrayBuffer, problems: Writer): PluginConfig | null {
  const config = new PluginConfig();
  if (isBlank(text)) return config;
  const root = parseJson(text);
  if (root === null || root.kind != JsonKind.Object) {
    problems.text(E_CONFIG_NOT_JSON);
    return null;
  }
  const out = new Problems(problems);
  const top = new Section(root, "", out);
  const poll = top.section("poll");
  config.pollCluster = poll.string("cluster", config.pollCluster);
  config.pollPath = poll.path("path", config.pollPath);
  config.pollAuthority = poll.string("authority", config.pollAuthority);
  config.pollPeriodMs = poll.int("periodMs", config.pollPeriodMs, 100, 3600000);
  config.pollTimeoutMs = poll.int("timeoutMs", config.pollTimeoutMs, 1, 60000);
  poll.finish();
  const health = top.section("health");
  config.healthPath = health.path("path", config.healthPath);
  config.healthAnswerWhenServing = health.bool("answerWhenServing", true);
  health.finish();
  config.drainingHeader = top.headerName("drainingHeader", config.drainingHeader);
  config.closeHeader = top.headerName("closeHeader", config.closeHeader);
  config.closeRampMs = top.int("closeRampMs", config.closeRampMs, 0, 3600000);
  config.draining = top.bool("draining", false);
  top.finish();
  return out.count > 0 ? null : config;
}
