// The runtime settings the sidecar ships with, measured on the bench (BENCHMARKS.md section 6, docs/footprint.md,
// README "Sidecar resources"): applied by the `meshext` executable itself (extproc/cli.ts relaunches a long-running
// command with whichever are missing, see missingRuntimeSettings), and the resources of the container `meshext
// inject` adds. The image and inject do not repeat them.

/**
 * The settings a long-running meshext process runs with (docs/footprint.md has the measurements):
 * - MALLOC_ARENA_MAX=1: glibc keeps one malloc arena for the process instead of one per thread that ever
 *   allocated (V8's helper threads, the short-lived policy parse worker), whose freed memory otherwise stays
 *   resident: idle RSS at 10 000 mesh policies, 100 selecting, 66 → 63 MiB once settled. glibc only (the image is
 *   node:20-slim, Debian).
 * - NODE_OPTIONS:
 *   - --max-semi-space-size=4: a 4 MiB young generation (Node's grows to 16): peak RSS under 64 in flight
 *     142 → 116 MiB, and RSS in the 1M-request soak stays flat instead of wandering 125 → 163 MiB, for 0–8 % more
 *     CPU per request across full bench runs.
 *   - --expose-gc: lets the sidecar give that young generation back when it goes quiet (extproc/idle-trim.ts):
 *     V8 keeps it at the size start-up, a load or traffic grew it to, 8 MiB of idle RSS, until a collection
 *     finds the allocation rate low, which an idle process may not see for a long time (a 1 000-policy sidecar
 *     still held it 30 s after its load: 68.8 MiB, 61.8 with the trim).
 */
export const SIDECAR_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=4", "--expose-gc"];

/** Environment variables that must be set before the process starts (glibc reads MALLOC_ARENA_MAX at start-up). */
export const SIDECAR_PROCESS_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "1" };

/** The settings as an environment: what a process started with it has from the start (the bench starts them so). */
export const SIDECAR_ENV: Readonly<Record<string, string>> = { ...SIDECAR_PROCESS_ENV, NODE_OPTIONS: SIDECAR_NODE_FLAGS.join(" ") };

/**
 * MESHEXT_RUNTIME_SETTINGS: `off` runs the command as started (the opt-out, like the --no-runtime-settings
 * argument); the relaunched process has `applied`, so it never relaunches again.
 */
export const RUNTIME_SETTINGS_ENV = "MESHEXT_RUNTIME_SETTINGS";
export const NO_RUNTIME_SETTINGS_ARG = "--no-runtime-settings";

export interface MissingRuntimeSettings {
  /** Variables to add (only those not set at all: an operator's own MALLOC_ARENA_MAX=4 stays). */
  env: Record<string, string>;
  /** Node flags to add (only those whose option is not given at all, in execArgv or NODE_OPTIONS). */
  nodeFlags: string[];
}

/** Which shipped settings this process lacks; undefined when none, or when the operator opted out. */
export function missingRuntimeSettings(env: NodeJS.ProcessEnv, execArgv: readonly string[]): MissingRuntimeSettings | undefined {
  const mode = env[RUNTIME_SETTINGS_ENV];
  if (mode === "off" || mode === "applied") return undefined;
  const optionOf = (flag: string) => flag.split("=")[0]!.replace(/_/g, "-");
  const given = new Set([...execArgv, ...(env.NODE_OPTIONS ?? "").split(/\s+/)].filter(Boolean).map(optionOf));
  const nodeFlags = SIDECAR_NODE_FLAGS.filter((f) => !given.has(optionOf(f)));
  const missingEnv = Object.fromEntries(Object.entries(SIDECAR_PROCESS_ENV).filter(([name]) => env[name] === undefined));
  return nodeFlags.length === 0 && Object.keys(missingEnv).length === 0 ? undefined : { env: missingEnv, nodeFlags };
}

/** Requests sized from idle RSS at 10 000 mesh policies, limits from the peak under load and during large loads. */
export const SIDECAR_RESOURCES = { requests: { cpu: "50m", memory: "96Mi" }, limits: { cpu: "1000m", memory: "256Mi" } } as const;
