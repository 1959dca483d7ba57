// Per-request glue of the drain filter: reads request facts through abi/host.ts, asks drain.ts,
// applies the answer. Host failures are logged and the request continues; the only local reply is health.
import { Context } from "./abi/context";
import { borrowedLength, borrowedPtr, borrowHeader, borrowProperty, byteLengthOf, nowMs, releaseBorrowed, replaceHeader, sendLocalResponse } from "./abi/host";
import { encodePairs } from "./abi/pairs";
import { HeaderAction, LogLevel, MapType, Status } from "./abi/types";
import { ascii } from "./abi/writer";
import * as contract from "./contract";
import { closeShare, healthAction, HealthAction, isHealthPath, isHttp1 } from "./drain";
import * as errors from "./errors";
import { emit, failedLine } from "./logging";
import { countClose, increment, Metric } from "./metrics";
import { DrainRoot } from "./root";

// Host-call constants as bytes, converted once at start-up rather than per call.
const PATH_KEY = ascii(":path");
const PROTOCOL_PROPERTY = ascii("request\0protocol");
const CONNECTION_KEY = ascii("connection");
const CONNECTION_CLOSE = ascii("close");
const DRAINING_VALUE = ascii(contract.DRAINING_HEADER_VALUE);
const CLOSE_VALUE = ascii(contract.CLOSE_HEADER_VALUE);
const HEALTH_HEADERS = encodePairs([ascii("content-type"), ascii("application/json"), ascii("cache-control"), ascii("no-store")]);

export class DrainStream extends Context {
  constructor(contextId: u32, public root: DrainRoot) {
    super(contextId);
  }

  onRequestHeaders(headerCount: u32, endOfStream: bool): u32 {
    const config = this.root.config;
    // The one host call of the serving path; the value is compared where the host put it.
    if (!borrowHeader(MapType.RequestHeaders, PATH_KEY)) return HeaderAction.Continue;
    const health = isHealthPath(borrowedPtr, borrowedLength, config.healthPath);
    releaseBorrowed();
    if (!health) return HeaderAction.Continue;
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

  /**
   * While draining: the draining header on every response; on the share the close ramp picks, the private
   * close marker (any protocol: the Lua shim turns it into Connection: close or GOAWAY) and, on HTTP/1.x,
   * `connection: close` itself (for hosts that act on it; Envoy strips it after the filters).
   */
  onResponseHeaders(headerCount: u32, endOfStream: bool): u32 {
    const root = this.root;
    const state = root.state;
    if (!state.draining) return HeaderAction.Continue;
    const config = root.config;
    if (byteLengthOf(config.drainingHeader) > 0) replaceHeader(MapType.ResponseHeaders, config.drainingHeader, DRAINING_VALUE);
    const rampMs = <i64>config.closeRampMs;
    const share = rampMs > 0 ? closeShare(state, nowMs(), rampMs) : 1.0;
    if (!root.ramp.shouldClose(share)) return HeaderAction.Continue;
    let status = Status.Ok;
    if (byteLengthOf(config.closeHeader) > 0) status = replaceHeader(MapType.ResponseHeaders, config.closeHeader, CLOSE_VALUE);
    if (status == Status.Ok && isHttp1Request()) status = replaceHeader(MapType.ResponseHeaders, CONNECTION_KEY, CONNECTION_CLOSE);
    if (status == Status.Ok) countClose();
    else emit(LogLevel.Warn, failedLine(errors.E_HEADER_WRITE, status));
    return HeaderAction.Continue;
  }
}

function isHttp1Request(): bool {
  if (!borrowProperty(PROTOCOL_PROPERTY)) return false;
  const http1 = isHttp1(borrowedPtr, borrowedLength);
  releaseBorrowed();
  return http1;
}
