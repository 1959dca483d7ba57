// The rejected items of one control-plane sync as /explain shows them (source URL, whether a last good version
// stays in force), each logged once as a warning.
import type { Logger } from "../log.js";
import { keptLastGoodFor } from "./last-good.js";
import type { RejectedItem } from "./resource-set.js";
import type { RejectedPolicy } from "./source.js";

export function reportRejected(refused: readonly RejectedItem[], keptKeys: ReadonlySet<string>, meshUrl: string, log: Logger): RejectedPolicy[] {
  const rejected = refused.map((r) => {
    const identified = r.kind !== undefined && r.name !== undefined;
    return { ...r, ...(identified ? { source: `${meshUrl}/${r.kind}/${r.name}` } : {}), keptLastGood: keptLastGoodFor(r, keptKeys) };
  });
  for (const r of rejected) {
    log.warn(
      { kind: r.kind, name: r.name, keptLastGood: r.keptLastGood, violations: r.violations },
      r.keptLastGood ? "rejected an invalid new version of a policy; its last good version stays in force" : "rejected an invalid resource from the control plane; the others apply",
    );
  }
  return rejected;
}
