// The embedded control plane's settings: one table of flags with their defaults, and the typed config.
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { splitHostPort } from "../host-port.js";
import { DEFAULT_KUMA_VERSION } from "../kuma-rest/kuma-version.js";
import { type FlagSpec, type FlagValues, type ParsedArgs, resolveFlags, pinnedKumaVersion } from "./flags.js";

/**
 * The control plane's variables are its own (MESHEXT_CONTROL_PLANE_LISTEN, _CONFIG, _DATA_DIR…): `meshext up` reads
 * both tables from one environment, where a shared MESHEXT_CONFIG would hand one command the other's file. The one
 * name it shares with the sidecar, MESHEXT_CONTROL_PLANE_TOKEN, means the same token on both sides.
 */
export const CONTROL_PLANE_ENV_PREFIX = "MESHEXT_CONTROL_PLANE_";

export const CONTROL_PLANE_FLAGS = [
  { key: "config", flag: "config", type: "path", default: "", help: "YAML or JSON file of flag values (keys are flag names)." },
  { key: "listen", flag: "listen", type: "hostport", default: "127.0.0.1:5681", help: "Address of the REST API (Kuma's default port). Loopback unless you set a token." },
  { key: "dataDir", flag: "data-dir", type: "path", default: ".meshext/cp", help: "Directory of the durable store (one YAML file per resource)." },
  { key: "token", flag: "token", type: "string", default: "", help: "When set, every write (PUT, DELETE, heartbeat) needs Authorization: Bearer <token>." },
  { key: "offlineTimeoutMs", flag: "offline-timeout", type: "duration", default: 30000, min: 100, help: "A dataplane without a heartbeat for this long is offline." },
  { key: "offlineGcAgeMs", flag: "offline-gc-age", type: "duration", default: 72 * 3_600_000, min: 100, help: "Offline dataplanes last seen longer ago than this are deleted (Kuma's dataplaneCleanupAge)." },
  { key: "kumaVersion", flag: "kuma-version", type: "string", default: DEFAULT_KUMA_VERSION, help: "Kuma release whose policy semantics and validation this control plane follows (2.5 to 2.14, or 3.0 as a preview of Kuma's unreleased main branch); reported as basedOnKuma by GET /." },
  { key: "maxBodyBytes", flag: "max-body-bytes", type: "int", default: 1 << 20, min: 1024, help: "Largest accepted request body, in bytes." },
  // decision samples pushed by sidecars (--decision-log-push), held in memory for dry runs (docs/control-plane.md)
  { key: "decisionSamplesPerDataplane", flag: "decision-samples-per-dataplane", type: "int", default: 1000, min: 1, help: "Most decision records held per dataplane (its newest); a push of more is refused with 413. Held in memory only: a restart starts empty." },
  { key: "decisionSamplesMaxBytes", flag: "decision-samples-max-bytes", type: "int", default: 64 << 20, min: 1024, help: "Most bytes of decision records held across all dataplanes; past it the oldest records of the dataplane holding the most go first." },
  { key: "logLevel", flag: "log-level", type: "enum", values: ["trace", "debug", "info", "warn", "error", "fatal", "silent"], default: "info", help: "Log level of the JSON log lines on stdout." },
] as const satisfies readonly FlagSpec[];

/** The control plane's resolved settings (durations in ms). */
export type ControlPlaneConfig = FlagValues<typeof CONTROL_PLANE_FLAGS>;

/** Resolves the control plane's flags (throws ConfigError on bad values). */
export function loadControlPlaneConfig(argv: readonly string[], env: NodeJS.ProcessEnv): { config: ControlPlaneConfig; parsed: ParsedArgs } {
  const parsed = resolveFlags(CONTROL_PLANE_FLAGS, argv, env, CONTROL_PLANE_ENV_PREFIX);
  const config = parsed.values as ControlPlaneConfig;
  pinnedKumaVersion(config.kumaVersion);
  return { config, parsed };
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

/** True for an IP literal in 127.0.0.0/8 or ::1 (IPv4-mapped ::ffff:127.x.y.z included). */
function isLoopbackIp(ip: string): boolean {
  const family = isIP(ip);
  return family !== 0 && LOOPBACK.check(ip, family === 4 ? "ipv4" : "ipv6");
}

/**
 * True when HOST:PORT can only be reached from this machine: a loopback IP literal, or a name every address
 * of which is loopback (localhost). A name that does not resolve, or merely starts with "127.", is not.
 */
export async function listensOnLoopbackOnly(hostPort: string): Promise<boolean> {
  const { host } = splitHostPort(hostPort);
  if (isIP(host)) return isLoopbackIp(host);
  try {
    const addresses = await lookup(host, { all: true });
    return addresses.length > 0 && addresses.every((a) => isLoopbackIp(a.address));
  } catch {
    return false;
  }
}
