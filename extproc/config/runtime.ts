// The runtime settings the sidecar ships with, measured on the bench (BENCHMARKS.md section 6, docs/footprint.md,
// README "Sidecar resources"): envoy/Dockerfile's ENV lines, and the env and resources of the container
// `meshext inject` adds.

/**
 * Environment of the sidecar process. MALLOC_ARENA_MAX=1: glibc keeps one malloc arena for the process instead
 * of one per thread that ever allocated (V8's helper threads, the short-lived policy parse worker); the freed
 * memory of those arenas otherwise stays resident. Idle RSS at 10 000 mesh policies, 100 selecting: 66 → 63 MiB
 * once settled; the request path runs on one thread, so there is no lock contention to pay for. glibc only
 * (the image is node:20-slim, Debian); musl ignores it.
 *
 * No V8 flag is shipped: a smaller young generation (`--max-semi-space-size=4`) cut peak RSS under load but
 * cost server CPU per request, and the peak meets its goal without it (docs/footprint.md has the figures).
 */
export const SIDECAR_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "1" };

/** Requests sized from idle RSS at 10 000 mesh policies, limits from the peak under load and during large loads. */
export const SIDECAR_RESOURCES = { requests: { cpu: "50m", memory: "96Mi" }, limits: { cpu: "1000m", memory: "256Mi" } } as const;
