// Starts a real sidecar in this process on 127.0.0.1 port 0 with chosen flags, for component tests.
import { loadSidecarConfig } from "../../extproc/config/sidecar.js";
import { silentLogger } from "../../extproc/log.js";
import { startSidecar, type Sidecar } from "../../extproc/sidecar.js";

export interface Harness {
  sidecar: Sidecar;
  grpcAddress: string;
  adminUrl: string;
  stop(): Promise<void>;
}

export async function startTestSidecar(extraArgs: string[] = []): Promise<Harness> {
  const { config } = loadSidecarConfig(["--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", ...extraArgs], {});
  const sidecar = await startSidecar(config, silentLogger());
  return {
    sidecar,
    grpcAddress: sidecar.grpcAddress,
    adminUrl: `http://${sidecar.adminAddress}`,
    stop: () => sidecar.stop(500),
  };
}
