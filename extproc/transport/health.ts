// grpc.health.v1.Health for "" and the ExternalProcessor service: Check, Watch (streams every
// change) and List. setServing() flips both names; the drain controller calls it.
import {
  HealthCheckRequest, HealthCheckResponse, HealthCheckResponse_ServingStatus as Serving, HealthListRequest, HealthListResponse,
} from "../gen/health/v1/health.js";
import { type Method, type ServerCall, unaryMethod } from "./grpc-server.js";
import { GrpcError, GrpcStatus } from "./grpc-wire.js";

export const EXT_PROC_SERVICE_NAME = "envoy.service.ext_proc.v3.ExternalProcessor";
export const HEALTH_SERVICE_NAMES = ["", EXT_PROC_SERVICE_NAME] as const;
const HEALTH_PATH = "/grpc.health.v1.Health";

const checkCodec = { decode: (b: Uint8Array) => HealthCheckRequest.decode(b), encode: (m: HealthCheckResponse) => HealthCheckResponse.encode(m).finish() };

export class HealthService {
  private serving = false;
  private readonly watchers = new Set<{ service: string; call: ServerCall<HealthCheckResponse> }>();

  /** SERVING (true) or NOT_SERVING (false) for every name we answer for; watchers are told. */
  setServing(serving: boolean): void {
    if (this.serving === serving) return;
    this.serving = serving;
    for (const w of this.watchers) w.call.write({ status: this.statusOf(w.service) });
  }

  get isServing(): boolean {
    return this.serving;
  }

  statusOf(service: string): Serving {
    if (!(HEALTH_SERVICE_NAMES as readonly string[]).includes(service)) return Serving.SERVICE_UNKNOWN;
    return this.serving ? Serving.SERVING : Serving.NOT_SERVING;
  }

  /** Ends every Watch stream (on shutdown). */
  closeWatchers(): void {
    for (const w of this.watchers) w.call.end();
    this.watchers.clear();
  }

  /** Check, Watch and List, for the gRPC server. */
  methods(): Array<Method<unknown, unknown>> {
    const check = unaryMethod(`${HEALTH_PATH}/Check`, checkCodec, (request) => {
      const status = this.statusOf(request.service);
      if (status === Serving.SERVICE_UNKNOWN) throw new GrpcError(GrpcStatus.NOT_FOUND, `unknown service ${JSON.stringify(request.service)}`);
      return { status };
    });
    const list = unaryMethod(`${HEALTH_PATH}/List`, {
      decode: (b: Uint8Array) => HealthListRequest.decode(b),
      encode: (m: HealthListResponse) => HealthListResponse.encode(m).finish(),
    }, () => {
      const statuses: Record<string, HealthCheckResponse> = {};
      for (const name of HEALTH_SERVICE_NAMES) statuses[name] = { status: this.statusOf(name) };
      return { statuses };
    });
    const watch: Method<HealthCheckRequest, HealthCheckResponse> = {
      path: `${HEALTH_PATH}/Watch`, ...checkCodec,
      open: (call) => {
        let watcher: { service: string; call: ServerCall<HealthCheckResponse> } | undefined;
        const drop = () => watcher && this.watchers.delete(watcher);
        return {
          onMessage: (request) => {
            if (watcher) return;
            watcher = { service: request.service, call };
            this.watchers.add(watcher);
            call.write({ status: this.statusOf(watcher.service) });
          },
          onHalfClose: () => {
            // A watch lasts until the client cancels or we shut down; one that never said what to watch ends.
            if (!watcher) call.fail(GrpcStatus.UNIMPLEMENTED, "a Watch call needs a request message");
          },
          onReadError: (error) => {
            drop();
            call.fail(error.code, error.details);
          },
          onCancel: drop,
        };
      },
    };
    return [check, watch, list] as Array<Method<unknown, unknown>>;
  }
}
