// The rule both policy sources follow when a document is rejected: the policy's last good version stays.
import type { Policy } from "../policy/model/types.js";

/** Identity of a policy within one source (one mesh): its kind and name. */
export function kindAndName(kind: string | undefined, name: string | undefined): string {
  return `${kind}/${name}`;
}

/**
 * A rejected document never replaces a good one: a rejected policy keeps its previous good version; a
 * rejected document that cannot even be identified (YAML error, no kind or name) keeps every previous
 * policy that the accepted ones do not replace. Returns the set to apply.
 */
export function keepLastGood(accepted: Policy[], rejected: ReadonlyArray<{ kind?: string; name?: string }>, previous: readonly Policy[] | undefined): Policy[] {
  if (!previous || rejected.length === 0) return accepted;
  const have = new Set(accepted.map((p) => kindAndName(p.type, p.name)));
  const anonymous = rejected.some((r) => !r.kind || !r.name);
  const rejectedKeys = new Set(rejected.map((r) => kindAndName(r.kind, r.name)));
  const kept = previous.filter((p) => !have.has(kindAndName(p.type, p.name)) && (anonymous || rejectedKeys.has(kindAndName(p.type, p.name))));
  return [...accepted, ...kept];
}
