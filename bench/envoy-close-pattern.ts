// The ext_proc close pattern measured through a real Envoy (the pinned install): failed requests per 1 000 at 64
// HTTP/1.1 keep-alive clients through the generated inbound listener, for Envoy's default close and its graceful
// close (runtime flag envoy.reloadable_features.ext_proc_graceful_grpc_close), with the sidecar's connection rotation
// off and at its default. The sidecar runs as a child process. Run: node dist/bench/envoy-close-pattern.js [requests]
import { startChildSidecar } from "../test/helpers/child-sidecar.js";
import { startEnvoyStack } from "../test/helpers/envoy-stack.js";
import { freePort } from "../test/helpers/prometheus.js";
import { http1Load } from "./http1-load.js";

export interface EnvoyCloseRun {
  close: "envoy-default" | "graceful";
  rotation: number;
  failedPer1000: number;
  statuses: Record<string, number>;
  protocolErrors: number;
  rps: number;
}

const noTest = { log: () => {}, pass: () => {}, fail: (m: string) => { throw new Error(m); }, teardown: () => {} };

export async function measureEnvoyClose(close: EnvoyCloseRun["close"], rotation: number, requests: number, inFlight = 64): Promise<EnvoyCloseRun> {
  const [grpcPort, adminPort] = [await freePort(), await freePort()];
  // message_timeout 2 s: the close pattern's failures are 500s, and a loaded machine's slow decisions (504s) would blur them
  const sidecar = await startChildSidecar(grpcPort, adminPort, ["--message-timeout", "2s", "--max-streams-per-connection", String(rotation)]);
  try {
    const stack = await startEnvoyStack(noTest as never, {
      sidecarAddresses: { grpc: `127.0.0.1:${grpcPort}`, admin: `127.0.0.1:${adminPort}` },
      bootstrap: (o) => ({ ...o, messageTimeoutMs: 2000 }),
      editYaml: (y) => y.replace("ext_proc_graceful_grpc_close: true", `ext_proc_graceful_grpc_close: ${close === "graceful"}`),
    });
    if (!stack) throw new Error("no Envoy: scripts/install-envoy.sh installs the pinned one");
    try {
      const r = await http1Load(`${stack.inboundUrl}/`, requests, inFlight);
      const stats = await stack.envoy.stats("^cluster\\.meshext_sidecar\\.upstream_cx_protocol_error$");
      return {
        close,
        rotation,
        failedPer1000: (r.failed / requests) * 1000,
        statuses: Object.fromEntries(r.statuses),
        protocolErrors: stats.get("cluster.meshext_sidecar.upstream_cx_protocol_error") ?? 0,
        rps: (requests / r.elapsedMs) * 1000,
      };
    } finally {
      await stack.stop();
    }
  } finally {
    sidecar.kill("SIGKILL");
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const requests = Number(process.argv[2] ?? 20_000);
  console.log(`| close | rotation | failed /1000 (${requests} requests, 64 in flight) | statuses | gRPC connection protocol errors | req/s |`);
  console.log("|---|---|---|---|---|---|");
  for (const [close, rotation] of [["envoy-default", 0], ["envoy-default", 500], ["graceful", 0], ["graceful", 500]] as const) {
    const r = await measureEnvoyClose(close, rotation, requests);
    console.log(`| ${r.close} | ${r.rotation || "off"} | ${r.failedPer1000.toFixed(1)} | ${JSON.stringify(r.statuses)} | ${r.protocolErrors} | ${r.rps.toFixed(0)} |`);
  }
}
