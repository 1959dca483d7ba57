// A PolicyEngine holding a policy set for one dataplane, built as the sidecar builds its own (policy-plane.ts):
// the policies that can select the dataplane are kept (selectForDataplane) and compiled with the resources.
import { PolicyEngine } from "../policy/decide/engine.js";
import type { RandomSource } from "../policy/decide/random.js";
import type { Dataplane } from "../policy/documents/dataplane.js";
import type { MeshResources } from "../policy/documents/resources.js";
import { DEFAULT_KUMA_VERSION, type KumaVersion } from "../policy/model/kuma-version.js";
import type { Policy } from "../policy/model/types.js";
import { selectForDataplane } from "../policy/selection/select.js";

export interface EngineSetOptions {
  kumaVersion?: KumaVersion;
  random?: RandomSource;
  /** Fixed clock (rate-limit buckets refill by it). @default Date.now */
  nowMs?: () => number;
}

/** The engine with `policies` in force for `dataplane`; throws with the compile error when the set does not compile. */
export function engineFor(dataplane: Dataplane, policies: readonly Policy[], resources: MeshResources, opts: EngineSetOptions = {}): PolicyEngine {
  const kumaVersion = opts.kumaVersion ?? DEFAULT_KUMA_VERSION;
  const engine = new PolicyEngine({ dataplane, kumaVersion, ...(opts.random ? { random: opts.random } : {}), ...(opts.nowMs ? { nowMs: opts.nowMs } : {}) });
  const selection = selectForDataplane(policies, dataplane, kumaVersion);
  const result = engine.replace(selection.kept, resources, { kept: selection.kept.length, total: selection.total });
  if (!result.ok) throw new Error(`the policy set does not compile for dataplane ${dataplane.name}: ${result.error}`);
  return engine;
}

/** A random source under which only faults at 100% fire (`never`) or every fault above 0% fires (`always`). */
export const FAULTS_NEVER: RandomSource = () => 0.999_999_999;
export const FAULTS_ALWAYS: RandomSource = () => 0;
