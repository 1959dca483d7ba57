// Per-request glue of the drain filter: reads request facts through abi/host.ts, asks drain.ts,
// applies the answer. Host failures are logged and the request continues; the only local reply is health.
import { HttpContext } from "./abi/context";
import { getHeader, getProperty, nowMs, replaceHeader, sendLocalResponse, utf8 } from "./abi/host";
import { decimal, logAt } from "./logging";
import { encodePairs } from "./abi/pairs";
import { HeaderAction, LogLevel, MapType, Status } from "./abi/types";
import * as contract from "./contract";
import { closeShare, healthAction, HealthAction, isHealthPath, isHttp1 } from "./drain";
import * as errors from "./errors";
import { DrainRoot } from "./root";

const PATH_KEY = utf8(":path");
const PROTOCOL_PROPERTY = utf8("request\0protocol");
const CONNECTION_KEY = utf8("connection");
const CLOSE_VALUE = utf8("close");
const DRAINING_VALUE = utf8(contract.DRAINING_HEADER_VALUE);
const HEALTH_HEADERS = encodePairs(["content-type", "cache-control"], ["application/json", "no-store"]);
const BODY_DRAINING = utf8(contract.HEALTH_BODY_DRAINING);
const BODY_SERVING = utf8(contract.HEALTH_BODY_SERVING);
const DETAILS_DRAINING = utf8(contract.HEALTH_DETAILS_DRAINING);
const DETAILS_SERVING = utf8("meshext_drain_health_serving");

export class DrainStream extends HttpContext {
  constructor(contextId: u32, public root: DrainRoot) {
    super(contextId);
  }

  onRequestHeaders(headerCount: u32, endOfStream: bool): u32 {
    const config = this.root.config;
    if (!isHealthPath(getHeader(MapType.RequestHeaders, PATH_KEY), this.root.healthPathBytes)) return HeaderAction.Continue;
    const action = healthAction(this.root.state.draining, config.healthAnswerWhenServing);
    if (action == HealthAction.PassThrough) return HeaderAction.Continue;
    const refuse = action == HealthAction.RefuseDraining;
    const status = refuse
      ? sendLocalResponse(503, DETAILS_DRAINING, BODY_DRAINING, HEALTH_HEADERS)
      : sendLocalResponse(200, DETAILS_SERVING, BODY_SERVING, HEALTH_HEADERS);
    if (status != Status.Ok) {
      logAt(LogLevel.Warn, errors.E_LOCAL_REPLY + decimal(status));
      return HeaderAction.Continue;
    }
    if (refuse) this.root.metrics.healthRefused();
    return HeaderAction.StopIteration;
  }

  onResponseHeaders(headerCount: u32, endOfStream: bool): u32 {
    const root = this.root;
    const state = root.state;
    if (!state.draining) return HeaderAction.Continue;
    if (root.drainingHeaderBytes.byteLength > 0) {
      replaceHeader(MapType.ResponseHeaders, root.drainingHeaderBytes, DRAINING_VALUE);
    }
    if (!isHttp1(getProperty(PROTOCOL_PROPERTY))) return HeaderAction.Continue;
    const rampMs = <i64>root.config.closeRampMs;
    const share = rampMs > 0 ? closeShare(state, nowMs(), rampMs) : 1.0;
    if (!root.ramp.shouldClose(share)) return HeaderAction.Continue;
    const status = replaceHeader(MapType.ResponseHeaders, CONNECTION_KEY, CLOSE_VALUE);
    if (status == Status.Ok) root.metrics.closedResponse();
    else logAt(LogLevel.Warn, errors.E_HEADER_WRITE + decimal(status));
    return HeaderAction.Continue;
  }
}
