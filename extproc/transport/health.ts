// grpc.health.v1.Health for "" and the ExternalProcessor service: Check, Watch (streams every
// change) and List. setServing() flips both names; the drain controller calls it.
import { status as GrpcStatus, type ServerUnaryCall, type ServerWritableStream, type sendUnaryData, type UntypedServiceImplementation } from "@grpc/grpc-js";
import { HealthCheckResponse_ServingStatus as Serving, type HealthCheckRequest, type HealthCheckResponse, type HealthListRequest, type HealthListResponse } from "../gen/health/v1/health.js";

export const EXT_PROC_SERVICE_NAME = "envoy.service.ext_proc.v3.ExternalProcessor";
export const HEALTH_SERVICE_NAMES = ["", EXT_PROC_SERVICE_NAME] as const;

export class HealthService {
  private serving = false;
  private readonly watchers = new Set<{ service: string; call: ServerWritableStream<HealthCheckRequest, HealthCheckResponse> }>();

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

  implementation(): UntypedServiceImplementation {
    return {
      check: (call: ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>, callback: sendUnaryData<HealthCheckResponse>) => {
        const status = this.statusOf(call.request.service);
        if (status === Serving.SERVICE_UNKNOWN) {
          return callback({ code: GrpcStatus.NOT_FOUND, details: `unknown service ${JSON.stringify(call.request.service)}` });
        }
        return callback(null, { status });
      },
      watch: (call: ServerWritableStream<HealthCheckRequest, HealthCheckResponse>) => {
        const watcher = { service: call.request.service, call };
        this.watchers.add(watcher);
        call.write({ status: this.statusOf(watcher.service) });
        const drop = () => this.watchers.delete(watcher);
        call.on("cancelled", drop);
        call.on("close", drop);
      },
      list: (_call: ServerUnaryCall<HealthListRequest, HealthListResponse>, callback: sendUnaryData<HealthListResponse>) => {
        const statuses: Record<string, HealthCheckResponse> = {};
        for (const name of HEALTH_SERVICE_NAMES) statuses[name] = { status: this.statusOf(name) };
        return callback(null, { statuses });
      },
    };
  }
}
