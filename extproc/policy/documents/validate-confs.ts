// Validates the `default` confs of MeshTrafficPermission, MeshFaultInjection and MeshRateLimit items.
import { parseGoDurationMs } from "./duration.js";
import { at, Issues, type Obj } from "./issues.js";

export const MTP_ACTIONS = ["Allow", "Deny", "AllowWithShadowDeny"] as const;

export function validateMtpConf(conf: Obj, path: string, issues: Issues): void {
  issues.oneOf(conf.action, at(path, "action"), MTP_ACTIONS);
}

export function validateMfiConf(conf: Obj, path: string, issues: Issues): void {
  const httpPath = at(path, "http");
  const list = issues.arr(conf.http, httpPath, false);
  list?.forEach((raw, i) => {
    const p = at(httpPath, i);
    const fault = issues.obj(raw, p);
    if (!fault) return;
    if (fault.abort === undefined && fault.delay === undefined && fault.responseBandwidth === undefined) {
      issues.add(p, "must have at least one defined: abort, delay, responseBandwidth");
    }
    const abort = issues.obj(fault.abort, at(p, "abort"), false);
    if (abort) {
      issues.int(abort.httpStatus, at(at(p, "abort"), "httpStatus"), 100, 599);
      validatePercentage(abort.percentage, at(at(p, "abort"), "percentage"), issues);
    }
    const delay = issues.obj(fault.delay, at(p, "delay"), false);
    if (delay) {
      validateDuration(delay.value, at(at(p, "delay"), "value"), 0, issues);
      validatePercentage(delay.percentage, at(at(p, "delay"), "percentage"), issues);
    }
    const bw = issues.obj(fault.responseBandwidth, at(p, "responseBandwidth"), false);
    if (bw) {
      const limit = issues.str(bw.limit, at(at(p, "responseBandwidth"), "limit"));
      if (limit !== undefined && !/^\d+(\.\d+)?\s?[gmk]?bps$/i.test(limit)) {
        issues.add(at(at(p, "responseBandwidth"), "limit"), 'must be a bandwidth such as "100kbps" (units: bps, kbps, mbps, gbps)');
      }
      validatePercentage(bw.percentage, at(at(p, "responseBandwidth"), "percentage"), issues);
    }
  });
}

export function validateMrlConf(conf: Obj, path: string, issues: Issues): void {
  const localPath = at(path, "local");
  const local = issues.obj(conf.local, localPath);
  if (!local) return;
  if (local.http === undefined && local.tcp === undefined) issues.add(localPath, "must have at least one defined: http, tcp");
  const http = issues.obj(local.http, at(localPath, "http"), false);
  if (http) {
    const hp = at(localPath, "http");
    if (http.disabled === undefined && http.requestRate === undefined && http.onRateLimit === undefined) {
      issues.add(hp, "must have at least one defined: disabled, requestRate, onRateLimit");
    }
    issues.bool(http.disabled, at(hp, "disabled"));
    validateRate(http.requestRate, at(hp, "requestRate"), issues);
    const on = issues.obj(http.onRateLimit, at(hp, "onRateLimit"), false);
    if (on) {
      const op = at(hp, "onRateLimit");
      issues.int(on.status, at(op, "status"), 100, 599, false);
      const headers = issues.obj(on.headers, at(op, "headers"), false);
      if (headers) {
        validateHeaderList(headers.set, at(at(op, "headers"), "set"), issues);
        validateHeaderList(headers.add, at(at(op, "headers"), "add"), issues);
      }
    }
  }
  const tcp = issues.obj(local.tcp, at(localPath, "tcp"), false);
  if (tcp) {
    if (tcp.disabled === undefined && tcp.connectionRate === undefined) issues.add(at(localPath, "tcp"), "must have at least one defined: disabled, connectionRate");
    issues.bool(tcp.disabled, at(at(localPath, "tcp"), "disabled"));
    validateRate(tcp.connectionRate, at(at(localPath, "tcp"), "connectionRate"), issues);
  }
}

function validateRate(v: unknown, path: string, issues: Issues): void {
  const rate = issues.obj(v, path, false);
  if (!rate) return;
  issues.int(rate.num, at(path, "num"), 1, Number.MAX_SAFE_INTEGER);
  validateDuration(rate.interval, at(path, "interval"), 50, issues, true);
}

/** A list of {name, value} header entries (rate-limit reply headers, route header modifiers). */
export function validateHeaderList(v: unknown, path: string, issues: Issues): Array<{ name: string; value: string }> {
  const list = issues.arr(v, path, false);
  if (!list) return [];
  if (list.length > 16) issues.add(path, "must have at most 16 elements");
  list.forEach((raw, i) => {
    const h = issues.obj(raw, at(path, i));
    if (!h) return;
    const name = issues.str(h.name, at(at(path, i), "name"));
    if (name && !/^[A-Za-z0-9!#$%&'*+\-.^_`|~:]+$/.test(name)) issues.add(at(at(path, i), "name"), "must be a valid HTTP header name");
    const value = issues.str(h.value, at(at(path, i), "value"), false);
    if (value !== undefined) refuseControlCharacters(value, at(at(path, i), "value"), issues);
  });
  return list as Array<{ name: string; value: string }>;
}

/** Why a value bound for an HTTP header must not hold CR, LF or NUL: Envoy does not drop such an edit, it fails. */
export const CONTROL_CHARACTER_MESSAGE =
  "must not contain CR, LF or NUL (Envoy fails every request the edit applies to with 500, and drops every header of a local reply)";

/** A value that becomes an HTTP header value (an edit, :path, location): CR, LF and NUL are refused. */
export function refuseControlCharacters(value: string, path: string, issues: Issues): void {
  if (/[\r\n\0]/.test(value)) issues.add(path, CONTROL_CHARACTER_MESSAGE);
}

export function validateDuration(v: unknown, path: string, minMs: number, issues: Issues, exclusiveMin = false): void {
  if (v === undefined) {
    issues.add(path, "must be defined");
    return;
  }
  const ms = parseGoDurationMs(v);
  if (ms === undefined) {
    issues.add(path, 'must be a duration such as "100ms", "2s", "1m"');
    return;
  }
  if (exclusiveMin ? ms <= minMs : ms < minMs) issues.add(path, `must be ${exclusiveMin ? "greater than" : "at least"} ${minMs}ms`);
}

/** Kuma percentages: an integer or a quoted decimal string, 0–100. */
export function validatePercentage(v: unknown, path: string, issues: Issues): void {
  if (v === undefined) {
    issues.add(path, "must be defined");
    return;
  }
  const n = percentageValue(v);
  if (n === undefined) issues.add(path, 'must be an integer or a decimal string such as "12.5"');
  else if (n < 0 || n > 100) issues.add(path, "must be in inclusive range [0, 100]");
}

export function percentageValue(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isInteger(v) ? v : undefined;
  if (typeof v === "string" && /^\d+(\.\d+)?$/.test(v.trim())) return Number(v);
  return undefined;
}
