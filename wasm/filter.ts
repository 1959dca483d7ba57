// Per-request glue of the drain filter: reads request facts through abi/host.ts, asks drain.ts,
// applies the answer. Host failures are logged and the request continues; the only local reply is health.
import { Context } from "./abi/context";
import { getHeader, getProperty, nowMs, replaceHeader, sendLocalResponse } from "./abi/host";
import { encodePairs } from "./abi/pairs";
import { HeaderAction, LogLevel, MapType, Status } from "./abi/types";
import { ascii } from "./abi/writer";
import * as contract from "./contract";
import { closeShare, healthAction, HealthAction, isHealthPath, isHttp1 } from "./drain";
import * as errors from "./errors";
import { emit, failedLine } from "./logging";
import { increment, Metric } from "./metrics";
import { DrainRoot } from "./root";

const HEALTH_HEADERS = encodePairs([ascii("content-type"), ascii("application/json"), ascii("cache-control"), ascii("no-store")]);

export class DrainStream extends Context {
  constructor(contextId: u32, public root: DrainRoot) {
    super(contextId);
  }

  onRequestHeaders(headerCount: u32, endOfStream: bool): u32 {
    const config = this.root.config;
    if (!isHealthPath(getHeader(MapType.RequestHeaders, ":path"), config.healthPath)) return HeaderAction.Continue;
    const action = healthAction(this.root.state.draining, config.healthAnswerWhenServing);
    if (action == HealthAction.PassThrough) return HeaderAction.Continue;
    const refuse = action == HealthAction.RefuseDraining;
    const status = refuse
      ? sendLocalResponse(503, contract.HEALTH_DETAILS_DRAINING, contract.HEALTH_BODY_DRAINING, HEALTH_HEADERS)
      : sendLocalResponse(200, "meshext_drain_health_serving", contract.HEALTH_BODY_SERVING, HEALTH_HEADERS);
    if (status != Status.Ok) {
      emit(LogLevel.Warn, failedLine(errors.E_LOCAL_REPLY, status));
      return HeaderAction.Continue;
    }
    if (refuse) increment(Metric.HealthRefusals);
    return HeaderAction.StopIteration;
  }

  onResponseHeaders(headerCount: u32, endOfStream: bool): u32 {
    const root = this.root;
    const state = root.state;
    if (!state.draining) return HeaderAction.Continue;
    const marker = root.config.drainingHeader;
    if (marker.byteLength > 0) replaceHeader(MapType.ResponseHeaders, marker, contract.DRAINING_HEADER_VALUE);
    if (!isHttp1(getProperty("request\0protocol"))) return HeaderAction.Continue;
    const rampMs = <i64>root.config.closeRampMs;
    const share = rampMs > 0 ? closeShare(state, nowMs(), rampMs) : 1.0;
    if (!root.ramp.shouldClose(share)) return HeaderAction.Continue;
    const status = replaceHeader(MapType.ResponseHeaders, "connection", "close");
    if (status == Status.Ok) increment(Metric.CloseResponses);
    else emit(LogLevel.Warn, failedLine(errors.E_HEADER_WRITE, status));
    return HeaderAction.Continue;
  }
}
