// The policy set of a directory from its files' states: held policies in file order, a later file's policy
// replacing an earlier one of the same key (as compile() resolves duplicates), and how many policies there are.
import { policyKey, type Policy } from "../policy/model/types.js";
import type { FileState } from "./policy-file.js";
import { mayHoldKey } from "./key-filter.js";

/**
 * The files' held policies in order, a later file's policy replacing an earlier one of the same key, held
 * or not (as compile() resolves duplicates). `total` counts distinct policies, except that a policy held by
 * no file but defined in two files counts twice (telling those apart would mean a set of every key).
 */
export function combine(files: Iterable<FileState>): { policies: Policy[]; total: number } {
  const byKey = new Map<string, Policy | undefined>();
  let total = 0;
  for (const f of files) {
    if (byKey.size > 0 && f.droppedCount > 0 && mayDrop(f, byKey)) {
      for (const key of f.dropped.split("\n")) {
        if (byKey.has(key)) {
          byKey.set(key, undefined);
          total--;
        }
      }
    }
    for (const p of f.held) {
      const key = policyKey(p);
      if (byKey.has(key)) total--;
      byKey.set(key, p);
    }
    total += f.held.length + f.droppedCount;
  }
  return { policies: [...byKey.values()].filter((p): p is Policy => p !== undefined), total };
}

/** Whether any key so far may be among `f`'s dropped keys (no filter: assume so). */
function mayDrop(f: FileState, byKey: ReadonlyMap<string, unknown>): boolean {
  if (!f.droppedFilter) return true;
  for (const key of byKey.keys()) if (mayHoldKey(f.droppedFilter, key)) return true;
  return false;
}
