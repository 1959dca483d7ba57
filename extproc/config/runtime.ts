// The runtime settings the sidecar ships with, measured on the bench (BENCHMARKS.md section 6, docs/footprint.md,
// README "Sidecar resources"): envoy/Dockerfile's ENV lines, and the env and resources of the container
// `meshext inject` adds.

/**
 * Environment of the sidecar process, as envoy/Dockerfile and `meshext inject` set it (docs/footprint.md has the
 * measurements):
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

export const SIDECAR_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "1", NODE_OPTIONS: SIDECAR_NODE_FLAGS.join(" ") };

/** Requests sized from idle RSS at 10 000 mesh policies, limits from the peak under load and during large loads. */
export const SIDECAR_RESOURCES = { requests: { cpu: "50m", memory: "96Mi" }, limits: { cpu: "1000m", memory: "256Mi" } } as const;
