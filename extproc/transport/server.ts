// The sidecar's gRPC server: ExternalProcessor and Health on one grpc-server.ts GrpcServer, bound to TCP
// and/or a Unix socket; graceful shutdown lets in-flight streams finish.
import { GrpcServer } from "./grpc-server.js";
import type { HealthService } from "./health.js";
import { processMethod, type StreamDeps } from "./stream.js";

/** Envoy request headers can reach 8 MiB (max_request_headers_kb); buffered bodies more. */
export const MAX_RECEIVE_MESSAGE_BYTES = 16 * 1024 * 1024;
/** nghttp2's memory cap per connection (MiB): Envoy multiplexes a worker's streams on one connection. */
export const MAX_SESSION_MEMORY_MIB = 64;

export class ExtProcServer {
  private readonly server: GrpcServer;

  constructor(deps: StreamDeps, health: HealthService, maxStreamsPerConnection: number) {
    this.server = new GrpcServer({
      maxReceiveMessageBytes: MAX_RECEIVE_MESSAGE_BYTES,
      maxSessionMemoryMiB: MAX_SESSION_MEMORY_MIB,
      maxStreamsPerConnection,
      onRotate: () => deps.metrics.connectionsRotated.inc(),
      onStreamError: (error) => deps.log.debug({ err: error.message }, "HTTP/2 stream or session error"),
      onHandlerError: (err) => deps.log.error({ err }, "ext_proc handler failed; its stream ended with INTERNAL"),
    });
    this.server.add(processMethod(deps));
    for (const method of health.methods()) this.server.add(method);
  }

  /** Binds "host:port" (port 0 picks one) or "unix:/path"; returns the bound address. */
  bind(address: string): Promise<string> {
    return this.server.bind(address);
  }

  /** Stops accepting streams and waits up to graceMs for open ones, then forces. */
  shutdown(graceMs: number): Promise<void> {
    return this.server.shutdown(graceMs);
  }
}
