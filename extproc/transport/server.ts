// The gRPC server: ExternalProcessor and Health on one grpc-js Server, bound to TCP and/or a
// Unix socket; graceful shutdown lets in-flight streams finish.
import { Server, ServerCredentials, type ServerDuplexStream } from "@grpc/grpc-js";
import { ExternalProcessorService, type ProcessingRequest, type ProcessingResponse } from "../gen/envoy/service/ext_proc/v3/external_processor.js";
import { HealthService as HealthServiceDefinition } from "../gen/health/v1/health.js";
import { rotateConnections } from "./connection-rotation.js";
import type { HealthService } from "./health.js";
import { handleProcessStream, type StreamDeps } from "./stream.js";

/** Envoy request headers can reach 8 MiB (max_request_headers_kb); buffered bodies more. */
export const MAX_RECEIVE_MESSAGE_BYTES = 16 * 1024 * 1024;

/** grpc-js server options of the ext_proc server (the bench's echo baseline uses the same). */
export const EXT_PROC_SERVER_OPTIONS = {
  "grpc.max_receive_message_length": MAX_RECEIVE_MESSAGE_BYTES,
  // Envoy keeps one long-lived HTTP/2 connection per worker: allow its keepalive pings.
  "grpc.keepalive_permit_without_calls": 1,
  "grpc-node.max_session_memory": 64,
} as const;

export class ExtProcServer {
  private readonly server: Server;
  private readonly onRotate: () => void;
  private readonly log: StreamDeps["log"];

  constructor(
    deps: StreamDeps,
    health: HealthService,
    private readonly maxStreamsPerConnection: number,
  ) {
    this.onRotate = () => deps.metrics.connectionsRotated.inc();
    this.log = deps.log;
    this.server = new Server({ ...EXT_PROC_SERVER_OPTIONS });
    this.server.addService(ExternalProcessorService, {
      process: (call: ServerDuplexStream<ProcessingRequest, ProcessingResponse>) => handleProcessStream(deps, call),
    });
    this.server.addService(HealthServiceDefinition, health.implementation());
  }

  /** Binds "host:port" (port 0 picks one) or "unix:/path"; returns the bound address. */
  bind(address: string): Promise<string> {
    return new Promise((resolve, reject) => {
      this.server.bindAsync(address, ServerCredentials.createInsecure(), (err, port) => {
        if (err) return reject(err);
        const hooked = rotateConnections(this.server, this.maxStreamsPerConnection, this.onRotate);
        if (!hooked && this.maxStreamsPerConnection > 0) {
          this.log.warn("cannot rotate HTTP/2 connections with this @grpc/grpc-js version: Envoy's default ext_proc close may hit Node's rapid-reset limit (set ext_proc_graceful_grpc_close in Envoy)");
        }
        if (address.startsWith("unix:")) return resolve(address);
        const host = address.slice(0, address.lastIndexOf(":"));
        return resolve(`${host}:${port}`);
      });
    });
  }

  /** Stops accepting streams and waits up to graceMs for open ones, then forces. */
  async shutdown(graceMs: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
