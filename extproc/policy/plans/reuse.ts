// Incremental compiles: a plan whose inputs equal those of the plan the previous snapshot had in its place is
// that plan, reused (with what it cached per client and per destination), so a policy change recompiles only the
// inbound and outbound plans it touches. Inputs are equal when each policy is the same object or has the same
// content (a source that reads a set again hands over new objects for unchanged policies).
import type { Policy } from "../model/types.js";

/** The policies (and any other input, as text) each plan was built from. */
const inputsOf = new WeakMap<object, { policies: readonly Policy[]; extra: string }>();
const contentOf = new WeakMap<Policy, string>();

function content(p: Policy): string {
  let c = contentOf.get(p);
  if (c === undefined) {
    c = JSON.stringify(p);
    contentOf.set(p, c);
  }
  return c;
}

/** Same length, and each policy the same object or of the same content. */
export function samePolicies(a: readonly Policy[], b: readonly Policy[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && content(a[i]!) !== content(b[i]!)) return false;
  return true;
}

/** `previous` when it was built from the same `policies` and `extra`, else a new plan from `build()`. */
export function reuseOrBuild<T extends object>(previous: T | undefined, policies: readonly Policy[], build: () => T, extra = ""): T {
  const was = previous && inputsOf.get(previous);
  if (was && was.extra === extra && samePolicies(was.policies, policies)) return previous!;
  const plan = build();
  inputsOf.set(plan, { policies, extra });
  return plan;
}
