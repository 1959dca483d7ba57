// Flags of the commands that talk to a running sidecar's admin port from inside its pod
// (`meshext drain`, `meshext wait-ready`): the table holding their defaults.
import { type FlagSpec, type FlagValues, type ParsedArgs, resolveConfig } from "./flags.js";
import { SIDECAR_FLAGS } from "./sidecar.js";

const ADMIN_LISTEN_DEFAULT = String(SIDECAR_FLAGS.find((f) => f.key === "adminListen")!.default);

/** Envoy admin as the injected pod runs it (render.ts's ENVOY_ADMIN_PORT), on loopback. */
export const ENVOY_ADMIN_DEFAULT = "http://127.0.0.1:9901";

const ADMIN = { key: "admin", flag: "admin", type: "url", default: `http://${ADMIN_LISTEN_DEFAULT}`, help: "The sidecar's admin URL (loopback: the local-only routes answer there without a token)." } as const;
const ADMIN_TOKEN = { key: "adminToken", flag: "admin-token", type: "string", default: "", help: "Bearer token for a non-loopback --admin (the sidecar's --admin-token)." } as const;

/** `meshext drain`'s flags. */
export const DRAIN_FLAGS = [
  ADMIN,
  ADMIN_TOKEN,
  { key: "forever", flag: "forever", type: "bool", default: false, help: "Drain forever (native sidecar preStop) and return at once, instead of waiting for a timed drain to complete." },
  { key: "timeoutMs", flag: "timeout", type: "duration", default: 60000, help: "Give up after this long (exit 1)." },
] as const satisfies readonly FlagSpec[];

/** `meshext wait-ready`'s flags. */
export const WAIT_READY_FLAGS = [
  ADMIN,
  ADMIN_TOKEN,
  { key: "envoyAdmin", flag: "envoy-admin", type: "url", default: ENVOY_ADMIN_DEFAULT, help: "Envoy admin URL whose /ready must answer 200 too; empty: only the sidecar." },
  { key: "timeoutMs", flag: "timeout", type: "duration", default: 60000, help: "Give up after this long (exit 1); 0: check once (for a startupProbe)." },
] as const satisfies readonly FlagSpec[];

export type DrainClientConfig = FlagValues<typeof DRAIN_FLAGS>;
export type WaitReadyConfig = FlagValues<typeof WAIT_READY_FLAGS>;

export function loadDrainClientConfig(argv: readonly string[], env: NodeJS.ProcessEnv): { config: DrainClientConfig; parsed: ParsedArgs } {
  return resolveConfig(DRAIN_FLAGS, argv, env);
}

export function loadWaitReadyConfig(argv: readonly string[], env: NodeJS.ProcessEnv): { config: WaitReadyConfig; parsed: ParsedArgs } {
  return resolveConfig(WAIT_READY_FLAGS, argv, env);
}
