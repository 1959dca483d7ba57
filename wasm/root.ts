// Root context of the drain filter: validates configuration, ticks, polls the sidecar's /drain on
// the root context, shares the state across VMs, keeps metrics, and makes one DrainStream per request.
import { Context } from "./abi/context";
import { getBufferBytes, getHeader, httpCall, lastCallToken, nowMs, setTickPeriodMs } from "./abi/host";
import { encodePairs } from "./abi/pairs";
import { BufferType, LogLevel, MapType, Status } from "./abi/types";
import { ascii } from "./abi/writer";
import { parseConfig, PluginConfig } from "./config";
import { CloseRamp, DrainState, effectiveState } from "./drain";
import * as errors from "./errors";
import { DrainStream } from "./filter";
import { emit, failedLine, logAt, startLine } from "./logging";
import { defineMetrics, flushCounts, increment, Metric, recordState } from "./metrics";
import { parseDrainBody } from "./poll";
import { claimPoll, readSharedState, storeSharedState } from "./shared";

const MAX_BODY_BYTES: u32 = 4096;

export class DrainRoot extends Context {
  config: PluginConfig = new PluginConfig();
  ramp: CloseRamp = new CloseRamp();
  /** What the sidecar said last (through shared data or our own poll). */
  polled: DrainState = new DrainState();
  /** What requests see: `polled`, or forced draining from the configuration. */
  state: DrainState = new DrainState();
  forcedSinceMs: i64 = 0;
  pendingToken: u32 = 0;
  pendingSinceMs: i64 = 0;
  pollHeaders: ArrayBuffer = new ArrayBuffer(0);

  onVmStart(vmConfigSize: u32): bool {
    defineMetrics();
    return true;
  }

  onConfigure(pluginConfigSize: u32): bool {
    let text = new ArrayBuffer(0);
    if (pluginConfigSize > 0) {
      const bytes = getBufferBytes(BufferType.PluginConfiguration, 0, pluginConfigSize);
      if (bytes === null) {
        logAt(LogLevel.Critical, errors.E_CONFIG_UNAVAILABLE);
        return false;
      }
      text = bytes;
    }
    // Violations are written straight into the critical line, which is emitted only on error.
    const line = startLine(errors.E_CONFIG_INVALID);
    const config = parseConfig(text, line);
    if (config === null) {
      emit(LogLevel.Critical, line.text(errors.E_CONFIG_EXPECTED));
      return false;
    }
    this.config = config;
    this.pollHeaders = encodePairs([
      ascii(":method"), ascii("GET"), ascii(":path"), config.pollPath,
      ascii(":authority"), config.pollAuthority, ascii("accept"), ascii("application/json"),
    ]);
    this.forcedSinceMs = config.draining ? nowMs() : 0;
    setTickPeriodMs(config.pollPeriodMs);
    this.sync();
    recordState(this.state);
    return true;
  }

  onTick(): void {
    flushCounts();
    this.sync();
    const now = nowMs();
    if (this.pendingToken != 0) {
      // Envoy always answers (a timeout answers with no headers); this only guards a lost answer.
      if (now - this.pendingSinceMs < <i64>this.config.pollTimeoutMs + <i64>this.config.pollPeriodMs) return;
      this.pendingToken = 0;
    }
    if (claimPoll(now, this.config.pollPeriodMs)) this.poll(now);
  }

  poll(now: i64): void {
    const status = httpCall(this.config.pollCluster, this.pollHeaders, this.config.pollTimeoutMs);
    if (status != Status.Ok) {
      emit(LogLevel.Warn, failedLine(errors.E_POLL_DISPATCH, status).text(", cluster ").buffer(this.config.pollCluster));
      increment(Metric.PollErrorDispatch);
      return;
    }
    this.pendingToken = lastCallToken;
    this.pendingSinceMs = now;
  }

  /** A failed or malformed answer keeps the last state and counts an error by reason. */
  onHttpCallResponse(token: u32, headerCount: u32, bodySize: u32, trailerCount: u32): void {
    if (token != this.pendingToken) return;
    this.pendingToken = 0;
    if (headerCount == 0) {
      logAt(LogLevel.Warn, errors.E_POLL_RESET);
      increment(Metric.PollErrorReset);
      return;
    }
    const status = getHeader(MapType.HttpCallResponseHeaders, ":status");
    if (status === null || status.byteLength != 3 || (load<u32>(changetype<usize>(status)) & 0xffffff) != 0x303032) { // "200"
      const line = startLine(errors.E_POLL_STATUS);
      emit(LogLevel.Warn, status !== null ? line.buffer(status) : line.byte(0x3f)); // '?'

      increment(Metric.PollErrorStatus);
      return;
    }
    const body = bodySize > 0 && bodySize <= MAX_BODY_BYTES
      ? getBufferBytes(BufferType.HttpCallResponseBody, 0, bodySize)
      : null;
    let polled: DrainState | null = null;
    if (body !== null) polled = parseDrainBody(body, this.polled, this.pendingSinceMs);
    if (polled === null) {
      logAt(LogLevel.Warn, errors.E_POLL_MALFORMED);
      increment(Metric.PollErrorMalformed);
      return;
    }
    increment(Metric.PollSuccesses);
    storeSharedState(polled);
    this.sync();
  }

  /** Adopt the shared state (if any VM stored one) and refresh gauges when it changed. */
  sync(): void {
    const shared = readSharedState();
    if (shared !== null) this.polled = shared;
    const next = effectiveState(this.polled, this.config.draining, this.forcedSinceMs);
    if (next.equals(this.state)) return;
    this.state = next;
    this.ramp = new CloseRamp();
    recordState(next);
    if (!next.draining) logAt(LogLevel.Info, "serving");
    else emit(LogLevel.Info, startLine("draining since ").decimal(<u64>next.sinceMs / 1000)
      .text(" s (deadline ").decimal(<u64>next.deadlineMs / 1000).text(" s)"));
  }

  newHttpContext(contextId: u32): Context {
    return new DrainStream(contextId, this);
  }
}
