// The what-if part of a policy's dry run: for each dataplane the candidate selects (or the stored version it would
// replace selected), the decision records its sidecar pushed are replayed against the mesh's policies with the candidate
// in place, by the replay `meshext policy what-if` runs (policy-tools/replay.ts), and summarised per dataplane.
import type { Dataplane } from "../policy/documents/dataplane.js";
import type { Policy } from "../policy/documents/parse.js";
import { dataplanesForPolicy } from "../policy/views/inspect.js";
import { Replayer, type WhatIfReport } from "../policy-tools/replay.js";
import { summaryLine } from "../policy-tools/what-if-text.js";
import { meshResources } from "./inspect-routes.js";
import type { RouteContext } from "./route-context.js";

export interface DataplaneWhatIf {
  mesh: string;
  name: string;
  /** `candidate`: the candidate selects it; `stored`: the version it replaces did. */
  selectedBy: Array<"candidate" | "stored">;
  /** Records held for it (pushed by its sidecar with --decision-log-push). */
  samples: number;
  /** The what-if summary line, or why there is none. */
  summary: string;
  /** The replay report (counts per change class, the first examples, what could not be replayed); absent without samples. */
  report?: Omit<WhatIfReport, "malformedExamples">;
}

export const NO_SAMPLES = "no decision samples held: its sidecar does not push them (--decision-log-push) or has not pushed yet";

export interface WhatIfInput {
  mesh: string;
  candidate: Policy;
  /** The stored policy the candidate replaces (same type and name), when it is valid. */
  stored?: Policy;
  /** The mesh's policies with the candidate in place of `stored`. */
  policies: readonly Policy[];
  /** The mesh's policies as stored (what `stored` selected with). */
  storedPolicies: readonly Policy[];
  dataplanes: readonly Dataplane[];
  examples: number;
}

export function whatIfOnSamples(ctx: RouteContext, input: WhatIfInput): DataplaneWhatIf[] {
  const { kumaVersion } = ctx;
  const byCandidate = new Set(dataplanesForPolicy(input.candidate, input.dataplanes, { kumaVersion, routes: input.policies }).items.map((m) => m.name));
  const byStored = new Set(input.stored ? dataplanesForPolicy(input.stored, input.dataplanes, { kumaVersion, routes: input.storedPolicies }).items.map((m) => m.name) : []);
  const affected = input.dataplanes.filter((d) => byCandidate.has(d.name) || byStored.has(d.name)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const resources = affected.length > 0 ? meshResources(ctx, input.mesh) : undefined;
  return affected.map((dp) => {
    const selectedBy = [...(byCandidate.has(dp.name) ? ["candidate" as const] : []), ...(byStored.has(dp.name) ? ["stored" as const] : [])];
    const lines = ctx.decisionSamples.lines(input.mesh, dp.name);
    const base = { mesh: input.mesh, name: dp.name, selectedBy, samples: lines.length };
    if (lines.length === 0) return { ...base, summary: NO_SAMPLES };
    const replayer = new Replayer({ dataplanes: [dp], policies: input.policies, resources: resources!, kumaVersion, examples: input.examples });
    lines.forEach((line, i) => replayer.line(line, i + 1));
    // Held records were checked when pushed: malformedExamples is always empty here.
    const { malformedExamples: _unused, ...report } = replayer.result();
    return { ...base, summary: summaryLine(replayer.result()), report };
  });
}
