// The policy set of a directory from its files' states: held policies in file order, a later file's policy
// replacing an earlier one of the same key (as compile() resolves duplicates), and how many policies there are.
import { policyKey, type Policy } from "../policy/model/types.js";
import type { FileState } from "./policy-file.js";
import { keyHashes, mayHoldHashed } from "./key-filter.js";

/**
 * The files' held policies in order, a later file's policy replacing an earlier one of the same key, held
 * or not (as compile() resolves duplicates). `total` counts distinct policies, except that a policy held by
 * no file but defined in two files counts twice (telling those apart would mean a set of every key).
 */
export function combine(files: Iterable<FileState>): { policies: Policy[]; total: number } {
  const byKey = new Map<string, Policy | undefined>();
  const hashed = new Map<string, [number, number]>();
  let total = 0;
  for (const f of files) {
    if (byKey.size > 0 && f.droppedCount > 0) {
      for (const key of keysDroppedBy(f, byKey, hashed)) {
        byKey.set(key, undefined);
        total--;
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

/**
 * The keys so far that are among `f`'s dropped keys: its filter rules most of them out (`hashed` keeps each
 * key's hashes for the next file), its list tells the rest, without being split into keys.
 */
function keysDroppedBy(f: FileState, byKey: ReadonlyMap<string, unknown>, hashed: Map<string, [number, number]>): string[] {
  const found: string[] = [];
  for (const key of byKey.keys()) {
    if (f.droppedFilter) {
      let h = hashed.get(key);
      if (!h) hashed.set(key, (h = keyHashes(key)));
      if (!mayHoldHashed(f.droppedFilter, h)) continue;
    }
    if (hasLine(f.dropped, key)) found.push(key);
  }
  return found;
}

/** Whether `line` is one of the newline-separated lines of `lines`. */
export function hasLine(lines: string, line: string): boolean {
  for (let at = lines.indexOf(line); at !== -1; at = lines.indexOf(line, at + 1)) {
    const startsLine = at === 0 || lines.charCodeAt(at - 1) === 10;
    const endsLine = at + line.length === lines.length || lines.charCodeAt(at + line.length) === 10;
    if (startsLine && endsLine) return true;
  }
  return false;
}
