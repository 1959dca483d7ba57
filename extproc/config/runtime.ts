// The Node runtime settings the sidecar ships with, measured on the bench (BENCHMARKS.md section 6, README
// "Sidecar resources"): envoy/Dockerfile's NODE_OPTIONS, and the NODE_OPTIONS and resources of the
// container `meshext inject` adds.

/**
 * V8 flags (NODE_OPTIONS accepts these two kinds of V8 flags only). A 1 MiB semi-space keeps the young
 * generation small: peak RSS under 64 in flight drops by about half, for a few more scavenges.
 */
export const SIDECAR_NODE_OPTIONS = ["--max-semi-space-size=1"] as const;

/** Requests sized from idle RSS at 10 000 mesh policies, limits from the peak under load and during large loads. */
export const SIDECAR_RESOURCES = { requests: { cpu: "50m", memory: "96Mi" }, limits: { cpu: "1000m", memory: "256Mi" } } as const;
