// Shared fixtures for the drain filter tests: the built modules, the contract, and a few drivers.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EnvoyProcess, ProxyWasmHost } from "../helpers/proxy-wasm-host.js";

export const FILTER_WASM = join(process.cwd(), "build", "meshext_drain.wasm");
export const NOOP_WASM = join(process.cwd(), "build", "noop.wasm");
export const CONTRACT = JSON.parse(readFileSync(join(process.cwd(), "wasm", "contract.json"), "utf8")) as Record<string, string>;

export const POLL_ERRORS = (reason: string): string => `${CONTRACT.metricPollErrors}${CONTRACT.metricReasonLabel}${reason}`;

/** A configured filter VM (config rejected → throws, so tests of bad config use startPlugin directly). */
export function startFilter(config: string | object = "", process?: EnvoyProcess): ProxyWasmHost {
  const host = ProxyWasmHost.load(FILTER_WASM, { process });
  if (!host.startPlugin(config)) throw new Error(`config rejected: ${host.logs("critical").join(" | ")}`);
  return host;
}

export function drainBody(draining: boolean, since: string | null = null, deadline: string | null = null): string {
  return JSON.stringify({ draining, since, deadline });
}

/** Let one tick fire and answer the poll it issued with `body` (status 200 unless given). */
export function poll(host: ProxyWasmHost, body: string, status = 200): void {
  host.advance(host.tickPeriodMs());
  const call = host.pendingHttpCalls()[0];
  if (!call) throw new Error("no poll was issued");
  host.respondHttpCall(call.token, { status, body });
}

/**
 * meshext_drain_close_responses_total as Envoy would show it after the VM's next tick: the filter counts closes
 * in the VM and hands them to the host once per tick (no host call per response).
 */
export function closeResponses(host: ProxyWasmHost): number {
  host.advance(host.tickPeriodMs());
  const value = host.metric(CONTRACT.metricCloseResponses!);
  if (value === undefined) throw new Error(`${CONTRACT.metricCloseResponses} is not defined`);
  return value;
}

/** One request/response through the filter; the stream is kept so its headers can be inspected. */
export function exchange(host: ProxyWasmHost, options: { path?: string; protocol?: string } = {}): number {
  const id = host.newHttpContext();
  host.callOnRequestHeaders(id, { ":method": "GET", ":path": options.path ?? "/api/items", ":authority": "app" }, { protocol: options.protocol });
  if (!host.localResponse(id)) host.callOnResponseHeaders(id, { ":status": "200", "content-type": "text/plain" });
  return id;
}
