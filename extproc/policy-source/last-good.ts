// The rule both policy sources follow when a document is rejected: the last good version of what it would
// replace stays — a policy, or a resource the engine decides with (Mesh, MeshService…, MeshIdentity) — and a
// Mesh that never had a good version counts as mTLS on, so a rejection never widens access.
import { RESOURCE_KINDS, type MeshResource } from "../policy/documents/resources.js";
import { POLICY_TYPES, type Policy } from "../policy/model/types.js";

/** Identity of a policy or resource within one source (one mesh): its kind and name. */
export function kindAndName(kind: string | undefined, name: string | undefined): string {
  return `${kind}/${name}`;
}

const EXACT_KINDS: ReadonlySet<string> = new Set<string>([...POLICY_TYPES, ...RESOURCE_KINDS]);

/**
 * A rejected document names what it would replace only when it has a name and an exact kind: a mis-cased
 * or unknown `type` (`meshtrafficpermission`) could be meant for any policy, so it counts as unidentified.
 */
export function identifies(r: { kind?: string; name?: string }): r is { kind: string; name: string } {
  return r.kind !== undefined && r.name !== undefined && EXACT_KINDS.has(r.kind);
}

/**
 * A rejected document never replaces a good one: a rejected document keeps the previous good version of
 * its kind and name; a rejected document that cannot be identified (YAML error, no name, no exact kind)
 * keeps every previous entry that the accepted ones do not replace. Returns the set to apply.
 */
export function keepLastGoodBy<T>(accepted: T[], rejected: ReadonlyArray<{ kind?: string; name?: string }>, previous: readonly T[] | undefined, keyOf: (t: T) => string): T[] {
  if (!previous || rejected.length === 0) return accepted;
  const have = new Set(accepted.map(keyOf));
  const anonymous = rejected.some((r) => !identifies(r));
  const rejectedKeys = new Set(rejected.map((r) => kindAndName(r.kind, r.name)));
  const kept = previous.filter((p) => !have.has(keyOf(p)) && (anonymous || rejectedKeys.has(keyOf(p))));
  return [...accepted, ...kept];
}

/** keepLastGoodBy for policies. */
export function keepLastGood(accepted: Policy[], rejected: ReadonlyArray<{ kind?: string; name?: string }>, previous: readonly Policy[] | undefined): Policy[] {
  return keepLastGoodBy(accepted, rejected, previous, (p) => kindAndName(p.type, p.name));
}

/**
 * Whether a rejected document still has a version in force (`inForce`: kind/name keys): by exact key when it
 * identifies one, by kind regardless of case when its kind is not exact, and any entry at all when it has no
 * kind or name (then everything previous stayed).
 */
export function keptLastGoodFor(r: { kind?: string; name?: string }, inForce: ReadonlySet<string>): boolean {
  if (identifies(r)) return inForce.has(kindAndName(r.kind, r.name));
  if (r.kind === undefined || r.name === undefined) return inForce.size > 0;
  const wanted = kindAndName(r.kind, r.name).toLowerCase();
  for (const key of inForce) if (key.toLowerCase() === wanted) return true;
  return false;
}

/** Label on the Mesh that stands in for a rejected Mesh with no good version (shown by inspect). */
export const FAIL_CLOSED_LABEL = "meshext.io/fail-closed";

/** The Mesh a rejected Mesh with no good version stands for: mTLS on, so no MeshTrafficPermission means deny. */
export function failClosedMesh(name: string): MeshResource {
  return { kind: "Mesh", name, labels: { [FAIL_CLOSED_LABEL]: "true" }, mtlsEnabled: true };
}

/** Whether `r` is such a stand-in (not a version of the document: it keeps nothing). */
export function isFailClosed(r: object): boolean {
  return (r as { labels?: Record<string, string> }).labels?.[FAIL_CLOSED_LABEL] === "true";
}

/** `meshes` plus a fail-closed Mesh for each rejected Mesh that has no version among them. */
export function withFailClosedMeshes<T extends { kind: string; name: string }>(resources: Array<T | MeshResource>, rejected: ReadonlyArray<{ kind?: string; name?: string }>): Array<T | MeshResource> {
  const out = [...resources];
  for (const r of rejected) {
    if (r.kind !== "Mesh" || r.name === undefined) continue;
    if (!out.some((m) => m.kind === "Mesh" && m.name === r.name)) out.push(failClosedMesh(r.name));
  }
  return out;
}

/** The keys (type/mesh/name) a file's previous read set aside: policies that cannot select this dataplane, kept as their key only. */
export function setAsideKeys(previous: { dropped?: string; droppedCount?: number } | undefined): string[] {
  return previous?.dropped && previous.droppedCount ? previous.dropped.split("\n") : [];
}

/**
 * The set-aside keys of a previous read that a rejection in this one keeps, as keepLastGoodBy keeps held
 * policies: a set-aside last good version still overrides an earlier file's version of its key, so a rejection
 * never brings that older version into force. `acceptedKeys` are this read's policies' keys.
 */
export function keptSetAsideKeys(previous: { dropped: string; droppedCount: number } | undefined, acceptedKeys: string[], rejected: ReadonlyArray<{ kind?: string; name?: string }>): string[] {
  if (!previous) return [];
  return keepLastGoodBy(acceptedKeys, rejected, setAsideKeys(previous), keyKindAndName).slice(acceptedKeys.length);
}

/** kindAndName of a type/mesh/name key (a mesh name holds no `/`). */
function keyKindAndName(key: string): string {
  const [type, , name] = key.split("/");
  return kindAndName(type, name);
}
