// The environment tests start a long-running meshext child with: the shipped runtime settings (SIDECAR_ENV) on top
// of the test's own, with the shipped Node flags appended to the inherited NODE_OPTIONS instead of replacing them, so
// whatever the test process was started with (Stryker's coverage hook, --import=…) reaches the child too.
import { SIDECAR_ENV, SIDECAR_NODE_FLAGS } from "../../extproc/config/runtime.js";

/** `base` with SIDECAR_ENV applied, NODE_OPTIONS = base's NODE_OPTIONS then the shipped flags (these win a clash). */
export function sidecarEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const inherited = (base.NODE_OPTIONS ?? "").trim();
  return { ...base, ...SIDECAR_ENV, NODE_OPTIONS: [inherited, ...SIDECAR_NODE_FLAGS].filter(Boolean).join(" ") };
}
