// The bounds every YAML input is held to (nesting depth, node count), apart from the scan that enforces them
// (yaml-limits.ts): readers that never load the yaml library (simple-yaml.ts, parse-simple.ts) share them.

export interface YamlLimits {
  /** Deepest accepted nesting, counted separately for flow and block style. */
  maxDepth: number;
  /** Most accepted entries; unbounded when absent. */
  maxNodes?: number;
}

/** Defaults shared by every caller; the control plane adds its own maxNodes. */
export const YAML_LIMITS: YamlLimits = { maxDepth: 64 };
