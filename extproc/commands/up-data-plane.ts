// The real data plane of `meshext up`: throwaway mTLS certificates (made at start, never committed), the demo app,
// and a real Envoy on the bootstrap `meshext run` generates, in front of the sidecar. Used when an Envoy and
// openssl are there; otherwise up says so in one line and runs the sidecar alone.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { EnvoyConfig } from "../config/envoy.js";
import { ConfigError } from "../config/flags.js";
import { inboundListenerName } from "../envoy-bootstrap/names.js";
import { locateEnvoy, PACKAGE_ROOT } from "../envoy-binary.js";

/** The demo's identities (envoy/policies/demo-app-permission.yaml allows namespace shop except its bot). */
export const DEMO_IDENTITY = {
  server: "spiffe://default.z1.mesh.local/ns/demo/sa/demo-app",
  web: "spiffe://default.z1.mesh.local/ns/shop/sa/web",
  bot: "spiffe://default.z1.mesh.local/ns/shop/sa/bot",
} as const;

export interface DemoCerts {
  dir: string;
  ca: string;
  /** name → { cert, key } of the client certificates: web (allowed), bot (denied). */
  clients: Record<"web" | "bot", { cert: string; key: string }>;
}

/** Why up cannot run a real data plane here, or undefined when it can. */
export function missingForDataPlane(env: NodeJS.ProcessEnv): string | undefined {
  const envoy = locateEnvoy(env);
  if ("error" in envoy) return envoy.error;
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
  } catch {
    return "openssl is not installed (the demo's throwaway mTLS certificates need it)";
  }
  return undefined;
}

/** Fresh throwaway certificates under `dir` (scripts/gen-test-certs.sh): CA, the dataplane's, web's and bot's. */
export function makeDemoCerts(dir: string): DemoCerts {
  execFileSync(join(PACKAGE_ROOT, "scripts", "gen-test-certs.sh"), [dir, `bot=${DEMO_IDENTITY.bot}`], {
    stdio: "ignore",
    env: { ...process.env, SERVER_URI: DEMO_IDENTITY.server, CLIENT_URI: DEMO_IDENTITY.web },
  });
  return {
    dir,
    ca: join(dir, "ca.crt"),
    clients: { web: { cert: join(dir, "client.crt"), key: join(dir, "client.key") }, bot: { cert: join(dir, "bot.crt"), key: join(dir, "bot.key") } },
  };
}

export interface DemoApp {
  process: ChildProcess;
  port: number;
  stop(): void;
}

/** envoy/demo-app/server.mjs on 127.0.0.1:`port` (0: a free one), once it says where it listens. */
export async function startDemoApp(port: number): Promise<DemoApp> {
  const child = spawn(process.execPath, [join(PACKAGE_ROOT, "envoy", "demo-app", "server.mjs")], {
    env: { ...process.env, HOST: "127.0.0.1", PORT: String(port) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout! });
  const listening = await new Promise<number>((resolve, reject) => {
    child.once("exit", (code) => reject(new ConfigError(`the demo app exited (${code}) before listening on 127.0.0.1:${port}`)));
    lines.once("line", (line) => resolve(Number((JSON.parse(line) as { port: number }).port)));
  });
  return { process: child, port: listening, stop: () => void child.kill("SIGTERM") };
}

/** The Envoy settings of the demo: inbound mTLS with the throwaway certificates, in front of the demo app. */
export function demoEnvoyConfig(base: EnvoyConfig, certs: DemoCerts, appPort: number): EnvoyConfig {
  return { ...base, appPort, tlsCert: join(certs.dir, "server.crt"), tlsKey: join(certs.dir, "server.key"), tlsCa: certs.ca };
}


/** The inbound listener's port as Envoy bound it (asks the admin when the flags said 0). */
export async function inboundPortOf(adminUrl: string, envoy: EnvoyConfig): Promise<number> {
  if (envoy.inboundPort !== 0) return envoy.inboundPort;
  const res = await fetch(`${adminUrl}/listeners?format=json`);
  const listeners = ((await res.json()) as { listener_statuses: { name: string; local_address: { socket_address: { port_value: number } } }[] }).listener_statuses;
  const name = inboundListenerName({ name: "0" });
  return listeners.find((l) => l.name === name)?.local_address.socket_address.port_value ?? 0;
}
