// Merges `default` confs the way Kuma does (MergeConfs in pkg/plugins/policies/core/rules/merge/merge.go):
// RFC 7386 merge patch in list order, objects deep-merge, arrays replace as a whole, and null never unsets
// (nulls are dropped first).
import { dropNulls, isObj } from "../documents/issues.js";

export type Conf = Record<string, unknown>;

/** Folds confs in order; later confs override earlier ones. */
export function mergeConfs(confs: readonly unknown[]): Conf {
  let out: Conf = {};
  for (const c of confs) {
    const clean = dropNulls(c);
    if (isObj(clean)) out = mergeInto(out, clean);
  }
  return out;
}

function mergeInto(base: Conf, patch: Conf): Conf {
  const out: Conf = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    const prev = out[key];
    out[key] = isObj(value) && isObj(prev) ? mergeInto(prev, value) : clone(value);
  }
  return out;
}

function clone(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(clone);
  if (isObj(v)) return mergeInto({}, v);
  return v;
}
