// A real data plane for tests: an echo app, the real sidecar (in this process) and a real Envoy on the bootstrap
// `meshext run` generates, every port ephemeral. What a request through Envoy's inbound listener meets in a pod.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ExecutionContext } from "ava";
import { envoyBootstrapYaml } from "../../extproc/envoy-bootstrap/bootstrap.js";
import { inboundListenerName, outboundListenerName } from "../../extproc/envoy-bootstrap/names.js";
import type { BootstrapOptions, TlsFiles } from "../../extproc/envoy-bootstrap/options.js";
import { splitHostPort } from "../../extproc/host-port.js";
import { BUILT_WASM_PATH } from "../../extproc/envoy-run/launch.js";
import { freePort } from "./prometheus.js";
import { requireEnvoy, startEnvoy, type FoundEnvoy, type RealEnvoy } from "./real-envoy.js";
import { startTestSidecar, type Harness } from "./sidecar-harness.js";

/** What the echo app received, as it answers it (JSON). */
export interface Echo {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface EchoApp {
  port: number;
  server: Server;
  /** Requests it has served. */
  served: number;
  /** Requests it holds for their `?delay=` right now. */
  held: number;
  close(): Promise<void>;
}

/** An upstream that echoes the request as JSON; `?status=N` answers N, `?delay=MS` waits, `?set-header=k:v` adds a header. */
export async function startEchoApp(handler?: (req: IncomingMessage, res: ServerResponse) => boolean): Promise<EchoApp> {
  const app: EchoApp = { port: 0, server: undefined as unknown as Server, served: 0, held: 0, close: async () => {} };
  const server = createServer((req, res) => {
    app.served++;
    if (handler?.(req, res)) return;
    const url = new URL(req.url ?? "/", "http://app");
    const status = Number(url.searchParams.get("status") ?? 200);
    const delayMs = Math.min(Number(url.searchParams.get("delay") ?? 0) || 0, 30_000);
    const extra = url.searchParams.getAll("set-header").map((h): [string, string] => [h.slice(0, h.indexOf(":")), h.slice(h.indexOf(":") + 1)]);
    if (delayMs > 0) app.held++;
    setTimeout(() => {
      if (delayMs > 0) app.held--;
      res.writeHead(status, { "content-type": "application/json", ...Object.fromEntries(extra) });
      const echo: Echo = { method: req.method ?? "", path: req.url ?? "", headers: req.headers };
      res.end(JSON.stringify(echo) + "\n");
    }, delayMs);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  app.server = server;
  app.port = (server.address() as AddressInfo).port;
  app.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return app;
}

export interface EnvoyStackOptions {
  /** Sidecar flags (policies, dataplane…), after the ephemeral listen addresses. */
  sidecarArgs?: string[];
  tls?: TlsFiles;
  /** Replace parts of the generated bootstrap options. */
  bootstrap?: (o: BootstrapOptions) => BootstrapOptions;
  /** Edit the generated YAML text before Envoy starts on it. */
  editYaml?: (yaml: string) => string;
  envoyArgs?: string[];
  /** An outbound listener to the echo app, named for this service. */
  outboundService?: string;
  /** The sidecar is started by the test itself (e.g. to test a sidecar that is down): its addresses. */
  sidecarAddresses?: { grpc: string; admin: string };
  /** Envoy's ext_proc message_timeout and the sidecar's --message-timeout (default STACK_MESSAGE_TIMEOUT_MS). */
  messageTimeoutMs?: number;
}

/**
 * The stacks' message timeout unless a test asks for another: the shipped 200 ms is what the timeout tests use, but
 * on a loaded 2-core machine a decision by the in-process sidecar can wait longer than that for a core (504s,
 * measured), which is not what the other tests are about.
 */
export const STACK_MESSAGE_TIMEOUT_MS = 2000;

export interface EnvoyStack {
  envoy: RealEnvoy;
  found: FoundEnvoy;
  sidecar?: Harness;
  app: EchoApp;
  /** http(s)://127.0.0.1:<inbound port> */
  inboundUrl: string;
  inboundPort: number;
  outboundPort?: number;
  bootstrapYaml: string;
  stop(): Promise<void>;
}

/** The bootstrap options `meshext run` would generate, on ephemeral listener ports. */
export function stackBootstrapOptions(appPort: number, addresses: { grpc: string; admin: string }, opts: EnvoyStackOptions, adminPort = 0): BootstrapOptions {
  const base: BootstrapOptions = {
    node: { id: "backend-1", cluster: "backend" },
    admin: { host: "127.0.0.1", port: adminPort },
    stats: { host: "127.0.0.1", port: 0 },
    inbounds: [{ name: "8080", listen: { host: "127.0.0.1", port: 0 }, app: { host: "127.0.0.1", port: appPort } }],
    outbounds: opts.outboundService ? [{ service: opts.outboundService, listen: { host: "127.0.0.1", port: 0 }, upstream: { host: "127.0.0.1", port: appPort } }] : [],
    sidecarGrpc: splitHostPort(addresses.grpc),
    sidecarAdmin: splitHostPort(addresses.admin),
    wasmPath: BUILT_WASM_PATH,
    messageTimeoutMs: opts.messageTimeoutMs ?? STACK_MESSAGE_TIMEOUT_MS,
    maxMessageTimeoutMs: 5000,
    inboundStatPrefix: "inbound",
    ...(opts.tls ? { tls: opts.tls } : {}),
  };
  return opts.bootstrap ? opts.bootstrap(base) : base;
}

/** Starts app, sidecar and Envoy (or returns undefined after requireEnvoy logged the skip); torn down with the test. */
export async function startEnvoyStack(t: ExecutionContext, opts: EnvoyStackOptions = {}): Promise<EnvoyStack | undefined> {
  const found = requireEnvoy(t);
  if (!found) return undefined;
  const app = await startEchoApp();
  let sidecar: Harness | undefined;
  if (!opts.sidecarAddresses) sidecar = await startTestSidecar(["--message-timeout", `${opts.messageTimeoutMs ?? STACK_MESSAGE_TIMEOUT_MS}ms`, "--max-message-timeout", "5s", ...(opts.sidecarArgs ?? [])]);
  const addresses = opts.sidecarAddresses ?? { grpc: sidecar!.grpcAddress, admin: sidecar!.sidecar.adminAddress };
  // The stats listener reaches the admin by port: it needs a fixed one (a port just free, not 0). Another process
  // may take it before Envoy binds it: then Envoy exits with "cannot bind", and we try another.
  let options: BootstrapOptions;
  let yaml: string;
  let envoy: RealEnvoy | undefined;
  for (let attempt = 1; ; attempt++) {
    options = stackBootstrapOptions(app.port, addresses, opts, await freePort());
    yaml = envoyBootstrapYaml(options, "a test");
    if (opts.editYaml) yaml = opts.editYaml(yaml);
    try {
      envoy = await startEnvoy(found, yaml, { args: opts.envoyArgs });
      break;
    } catch (err) {
      if (attempt < 3 && /cannot bind/.test((err as Error).message)) continue;
      await sidecar?.stop();
      await app.close();
      throw err;
    }
  }
  const inboundPort = await envoy.listenerPort(inboundListenerName(options.inbounds[0]!));
  const outboundPort = opts.outboundService ? await envoy.listenerPort(outboundListenerName({ service: opts.outboundService })) : undefined;
  const stack: EnvoyStack = {
    envoy,
    found,
    sidecar,
    app,
    inboundPort,
    ...(outboundPort !== undefined ? { outboundPort } : {}),
    inboundUrl: `${opts.tls ? "https" : "http"}://127.0.0.1:${inboundPort}`,
    bootstrapYaml: yaml,
    stop: async () => {
      await envoy.stop();
      await sidecar?.stop();
      await app.close();
    },
  };
  t.teardown(() => stack.stop());
  return stack;
}
