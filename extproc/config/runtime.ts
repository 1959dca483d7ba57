// The Node runtime settings the sidecar ships with, measured on the bench (BENCHMARKS.md section 6, README
// "Sidecar resources"): envoy/Dockerfile's NODE_OPTIONS, and the NODE_OPTIONS and resources of the
// container `meshext inject` adds.

/**
 * V8 flags (NODE_OPTIONS accepts only a few V8 flags, these among them). A 4 MiB semi-space (Node's default
 * grows to 16) keeps the young generation small: peak RSS under 64 in flight 143 → 122 MiB for about 10 %
 * more CPU per request; 1 MiB saved more (→ 109 MiB) but cost 20–30 % (docs/footprint.md).
 */
export const SIDECAR_NODE_OPTIONS = ["--max-semi-space-size=4"] as const;

/** Requests sized from idle RSS at 10 000 mesh policies, limits from the peak under load and during large loads. */
export const SIDECAR_RESOURCES = { requests: { cpu: "50m", memory: "96Mi" }, limits: { cpu: "1000m", memory: "256Mi" } } as const;
