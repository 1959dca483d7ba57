// Starts the Envoy of `meshext run` / `meshext up`: finds the binary, writes the bootstrap generated from the flags
// and the Dataplane (unless the command line brings its own), has Envoy validate it, spawns Envoy and waits until
// it is LIVE. A missing binary or a rejected bootstrap is a ConfigError (exit 2) in one readable message.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { EnvoyConfig } from "../config/envoy.js";
import { ConfigError } from "../config/flags.js";
import type { SidecarConfig } from "../config/sidecar.js";
import { EnvoyChild } from "../drain/envoy-child.js";
import { envoyBootstrapYaml } from "../envoy-bootstrap/bootstrap.js";
import { dataplaneNetworking, type DataplaneNetworking } from "../envoy-bootstrap/dataplane-networking.js";
import { bootstrapOptions, type SidecarAddresses } from "./bootstrap-from-config.js";
import { BOOTSTRAP_DEFAULTS } from "../envoy-bootstrap/options.js";
import { envoyVersionOf, findExecutable, locateEnvoy, PACKAGE_ROOT } from "../envoy-binary.js";
import type { Logger } from "../log.js";
import { localDataplane } from "../policy-source/from-config.js";
import { SERVICE_TAG } from "../policy/model/dataplane.js";
import { envoyCommandLine, type EnvoyCommandLine } from "./command-line.js";
import { untilEnvoyLive } from "./ready.js";
import { validateBootstrap } from "./validate.js";

/** The drain filter this installation built (asconfig.json's release target). */
export const BUILT_WASM_PATH = join(PACKAGE_ROOT, "build", "meshext_drain.wasm");

/** How long Envoy may take from spawn to LIVE before we say so (it goes on starting). */
const LIVE_TIMEOUT_MS = 30_000;

export interface EnvoyPlan {
  binary: string;
  version: string | undefined;
  command: EnvoyCommandLine;
  /** The generated bootstrap's path; undefined when the command line brings its own. */
  bootstrapPath?: string;
  /** Envoy's admin URL: generated, or --envoy-admin with the user's own bootstrap. */
  adminUrl: string;
  render(addresses: SidecarAddresses): string;
}


/**
 * Everything decided before the sidecar starts: the binary, the bootstrap (rendered with the configured addresses
 * and validated by Envoy), the admin URL. Throws ConfigError when Envoy cannot be started.
 */
export function planEnvoy(sidecar: SidecarConfig, envoy: EnvoyConfig, rest: readonly string[], env: NodeJS.ProcessEnv): EnvoyPlan {
  const command = envoyCommandLine(rest);
  let binary: string;
  if (command.binary !== undefined) {
    const found = findExecutable(command.binary, env);
    if (!found) throw new ConfigError(`Envoy command not found: ${command.binary} (after --; omit it to use the Envoy meshext finds: MESHEXT_ENVOY, the pinned install, PATH)`);
    binary = found;
  } else {
    const location = locateEnvoy(env);
    if ("error" in location) throw new ConfigError(location.error);
    binary = location.path;
  }
  const version = envoyVersionOf(binary);
  if (command.ownBootstrap) {
    // Your own bootstrap: validated too when the binary reports an Envoy version (a wrapper script may not).
    const check = version ? validateBootstrap(binary, command.args) : { ok: true, message: "" };
    if (!check.ok) throw new ConfigError(`Envoy rejected its configuration:\n${check.message}`);
    return { binary, version, command, adminUrl: sidecar.envoyAdmin, render: () => "" };
  }
  const wasmPath = envoy.wasmModule || BUILT_WASM_PATH;
  if (!existsSync(wasmPath)) throw new ConfigError(`--wasm-module: ${wasmPath} does not exist${envoy.wasmModule ? "" : " (build it: npm run build:wasm)"}`);
  for (const [flag, file] of [["--tls-cert", envoy.tlsCert], ["--tls-key", envoy.tlsKey], ["--tls-ca", envoy.tlsCa]] as const) {
    if (file && !existsSync(file)) throw new ConfigError(`${flag}: ${file} does not exist`);
  }
  const render = bootstrapRenderer(sidecar, envoy, wasmPath, "meshext run");
  const bootstrapPath = envoy.bootstrapFile || join(mkdtempSync(join(tmpdir(), "meshext-envoy-")), "envoy.yaml");
  mkdirSync(dirname(bootstrapPath), { recursive: true });
  writeFileSync(bootstrapPath, render({ grpc: sidecar.grpcListen, admin: sidecar.adminListen }));
  const check = validateBootstrap(binary, ["-c", bootstrapPath, ...command.args]);
  if (!check.ok) throw new ConfigError(`Envoy rejected the generated bootstrap ${bootstrapPath}:\n${check.message}`);
  return { binary, version, command, bootstrapPath, adminUrl: `http://${envoy.envoyAdminListen}`, render };
}

/**
 * The bootstrap for these flags, as a function of the sidecar's bound addresses: reads the Dataplane once (throws
 * ConfigError with every violation of its networking) and checks --outbound-upstreams against it.
 */
export function bootstrapRenderer(sidecar: SidecarConfig, envoy: EnvoyConfig, wasmPath: string, generatedBy: string): (addresses: SidecarAddresses) => string {
  const local = localDataplane(sidecar);
  let networking: DataplaneNetworking | undefined;
  if (local.document) {
    const read = dataplaneNetworking(local.document, BOOTSTRAP_DEFAULTS.appHost);
    if ("violations" in read) throw new ConfigError(`--dataplane-file ${sidecar.dataplaneFile}: ${read.violations.map((v) => `${v.field}: ${v.message}`).join("; ")}`);
    networking = read.networking;
  }
  const node = { id: local.dataplane.name, cluster: local.dataplane.inbounds[0]?.tags[SERVICE_TAG] ?? local.dataplane.name };
  const options = (addresses: SidecarAddresses) => bootstrapOptions(sidecar, envoy, networking, addresses, node, wasmPath);
  options({ grpc: sidecar.grpcListen, admin: sidecar.adminListen }); // refuses bad --outbound-upstreams now
  return (addresses) => envoyBootstrapYaml(options(addresses), generatedBy);
}

/** The Envoy arguments meshext adds to a generated bootstrap: it, no hot restart (one Envoy per sidecar, as kuma-dp runs it), a log level. */
function envoyArgs(plan: EnvoyPlan): string[] {
  if (!plan.bootstrapPath) return plan.command.args; // your own bootstrap: your command line, as given
  const hotRestart = plan.command.args.some((a) => a.startsWith("--base-id") || a.startsWith("--restart-epoch") || a === "--disable-hot-restart");
  // Warnings and up, and the drain filter's own lines ("draining since …"), unless the command line picks a level.
  const logLevel = plan.command.args.some((a) => a === "-l" || a.startsWith("--log-level") || a.startsWith("--component-log-level"));
  return [
    "-c",
    plan.bootstrapPath,
    ...(hotRestart ? [] : ["--disable-hot-restart"]),
    ...(logLevel ? [] : ["--log-level", "warning", "--component-log-level", "wasm:info"]),
    ...plan.command.args,
  ];
}

export interface StartedEnvoy {
  child: EnvoyChild;
  /** Envoy's admin URL once it is LIVE (after "envoy started" is logged); undefined if it exited or never got there. */
  live: Promise<string | undefined>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The admin address Envoy wrote to --admin-address-path (for an admin on port 0), once it is there. */
async function adminAddressFrom(path: string, exited: Promise<unknown>): Promise<string | undefined> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + LIVE_TIMEOUT_MS;
  while (!gone && Date.now() < deadline) {
    try {
      // Envoy may be halfway through writing it: the same text on two reads in a row is the address.
      const text = readFileSync(path, "utf8").trim();
      await sleep(25);
      if (text && text === readFileSync(path, "utf8").trim()) return `http://${text}`;
    } catch {
      // not written yet
    }
    await sleep(25);
  }
  return undefined;
}

/** Writes the bootstrap with the sidecar's bound addresses, spawns Envoy, and logs "envoy started" once it is LIVE. */
export function startPlannedEnvoy(plan: EnvoyPlan, addresses: SidecarAddresses, killGraceMs: number, log: Logger): StartedEnvoy {
  if (plan.bootstrapPath) writeFileSync(plan.bootstrapPath, plan.render(addresses));
  // An admin on port 0 (tests, several demos on one host): Envoy tells its address through a file.
  const addressPath = plan.bootstrapPath && /:0$/.test(plan.adminUrl) ? join(dirname(plan.bootstrapPath), "admin-address") : undefined;
  const args = [...envoyArgs(plan), ...(addressPath ? ["--admin-address-path", addressPath] : [])];
  const child = EnvoyChild.start([plan.binary, ...args], { killGraceMs, log });
  const live = (async () => {
    const adminUrl = addressPath ? await adminAddressFrom(addressPath, child.exited) : plan.adminUrl;
    if (!adminUrl) return undefined;
    if (await untilEnvoyLive(adminUrl, child.exited, LIVE_TIMEOUT_MS)) {
      log.info({ pid: child.pid, version: plan.version, admin: adminUrl, bootstrap: plan.bootstrapPath }, "envoy started");
      return adminUrl;
    }
    if (child.running) log.warn({ pid: child.pid, admin: adminUrl, waitedMs: LIVE_TIMEOUT_MS }, "envoy is not LIVE yet");
    return undefined;
  })();
  return { child, live };
}
