// Envoy's default ext_proc close (END_STREAM then RST_STREAM per request) against Node's HTTP/2
// rapid-reset protection: failed requests per 1 000, with and without the server's early close.
import { loadSidecarConfig } from "../extproc/config/sidecar.js";
import { silentLogger } from "../extproc/log.js";
import { startSidecar } from "../extproc/sidecar.js";
import { runLoad, type CloseMode } from "./envoy-load.js";

export interface RapidResetRow {
  /** Server-side mitigation: graceful GOAWAY after this many streams per connection (0 = off). */
  maxStreamsPerConnection: number;
  closeMode: CloseMode;
  inFlight: number;
  requests: number;
  failedPer1000: number;
  errors: Record<string, number>;
}

export async function measureRapidReset(opts: { requests: number; inFlight: number[]; closeModes?: CloseMode[]; maxStreamsPerConnection?: number[] }): Promise<RapidResetRow[]> {
  const rows: RapidResetRow[] = [];
  for (const maxStreamsPerConnection of opts.maxStreamsPerConnection ?? [0, 500]) {
    for (const closeMode of opts.closeModes ?? ["envoy-default"]) {
      for (const inFlight of opts.inFlight) {
        const { config } = loadSidecarConfig(["--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--max-streams-per-connection", String(maxStreamsPerConnection)], {});
        const sidecar = await startSidecar(config, silentLogger());
        try {
          const r = await runLoad({ target: sidecar.grpcAddress, inFlight, requests: opts.requests, closeMode });
          rows.push({ maxStreamsPerConnection, closeMode, inFlight, requests: opts.requests, failedPer1000: (r.failed / opts.requests) * 1000, errors: r.errors });
        } finally {
          await sidecar.stop(200);
        }
      }
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const requests = Number(process.argv[2] ?? 5000);
  for (const row of await measureRapidReset({ requests, inFlight: [1, 16, 64], closeModes: ["envoy-default", "graceful"] })) {
    console.log(JSON.stringify(row));
  }
}
