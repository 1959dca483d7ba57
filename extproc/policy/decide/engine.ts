// PolicyEngine: the Decider the transport calls. replace() compiles a policy set and swaps the snapshot
// atomically (a failed compile keeps the previous one); decide() never throws and does no I/O.
// Clock and random source are injected so tests are deterministic. Pure: no node:*, @grpc/*, transport.
import type { Decider, Decision, RequestFacts } from "../../decision.js";
import { auditOf } from "./audit.js";
import { compile, type InboundPlan, type Snapshot } from "../plans/compile.js";
import type { Dataplane } from "../model/dataplane.js";
import { IdentityCache, type ClientIdentity } from "./identity.js";
import { decideInbound } from "./inbound.js";
import type { KindTrace } from "./trace.js";
import { decideOutbound, type OutboundEvaluation } from "./outbound.js";
import { respond, type EvalContext } from "./outcomes.js";
import type { KumaVersion } from "../model/kuma-version.js";
import { BucketStore } from "./rate-limit.js";
import type { RandomSource } from "./random.js";
import type { SelectionCounts } from "../selection/select.js";
import { NO_RESOURCES, type MeshResources } from "../documents/resources.js";
import { routeEditDrops, type RouteEditDrop } from "./route-drops.js";
import type { Policy } from "../model/types.js";

/** The subset of a pino Logger the engine uses. */
export interface DecisionLog {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface PolicyEngineOptions {
  dataplane: Dataplane;
  /** Take client tags from x-kuma-tags when there is no certificate identity. @default false */
  trustKumaTagsHeader?: boolean;
  /** Decision before the first replace(). @default "deny" */
  beforeFirstSync?: "allow" | "deny";
  /** The Kuma version whose semantics decide (kuma-version.ts). @default "2.14" */
  kumaVersion?: KumaVersion;
  nowMs?: () => number;
  random?: RandomSource;
  log?: DecisionLog;
  /** Attach a DecisionAudit (client identity, matched policies) to every decision, for the decision log. @default false */
  audit?: boolean;
  /** Reuse the plans of the set in force that a new set leaves unchanged (false: compile every plan anew). @default true */
  reusePlans?: boolean;
}

export interface ReplaceResult {
  ok: boolean;
  version: number;
  policies: number;
  /** What the source delivered vs what was kept for this dataplane (when the caller filtered). */
  selection?: SelectionCounts;
  error?: string;
  /** MeshHTTPRoute edits (of routes selecting this proxy) that the shipped Envoy config's mutation_rules drop. */
  droppedEdits?: RouteEditDrop[];
}

export interface Evaluation {
  decision: Decision;
  identity?: ClientIdentity;
  inbound?: InboundPlan;
  trace: KindTrace[];
  outbound?: OutboundEvaluation;
  snapshot?: Snapshot;
}

export interface EvaluateOverrides {
  dryRun?: boolean;
  identity?: ClientIdentity;
  inbound?: string;
}

export class PolicyEngine implements Decider {
  private snapshot: Snapshot | undefined;
  private selection: SelectionCounts | undefined;
  private dp: Dataplane;
  private version = 0;
  private readonly buckets = new BucketStore();
  private readonly identities = new IdentityCache();
  private readonly nowMs: () => number;
  private readonly random: RandomSource;
  private kumaVersionInForce: KumaVersion | undefined;

  constructor(private readonly opts: PolicyEngineOptions) {
    this.nowMs = opts.nowMs ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.kumaVersionInForce = opts.kumaVersion;
    this.dp = opts.dataplane;
  }

  get loaded(): boolean {
    return this.snapshot !== undefined;
  }

  /** The dataplane the next replace() compiles for (the snapshot in force carries the one it was compiled for). */
  get dataplane(): Dataplane {
    return this.dp;
  }

  /** The local dataplane changed (labels, tags, inbounds): the next replace() compiles for `dp`. */
  setDataplane(dp: Dataplane): void {
    this.dp = dp;
  }

  /** Policies delivered by the source vs kept for this dataplane, as of the set in force. */
  selectionCounts(): SelectionCounts | undefined {
    return this.selection;
  }

  /** The compiled snapshot in force (undefined before the first replace). */
  current(): Snapshot | undefined {
    return this.snapshot;
  }

  get kumaVersion(): KumaVersion | undefined {
    return this.kumaVersionInForce;
  }

  /** Follows `version`'s semantics from the next replace() on (a control plane's version is known only once asked). */
  followKumaVersion(version: KumaVersion): void {
    this.kumaVersionInForce = version;
  }

  /**
   * Compiles `policies` (already validated) with the Mesh and service `resources` given alongside, and swaps
   * them in; on failure the previous set stays. `selection` records how many the source delivered when the
   * caller kept only those that can select this dataplane (select.ts).
   */
  replace(policies: readonly Policy[], resources: MeshResources = NO_RESOURCES, selection?: SelectionCounts): ReplaceResult {
    try {
      const next = compile(policies, this.dp, this.version + 1, { kumaVersion: this.kumaVersionInForce, resources, ...(this.opts.reusePlans === false ? {} : { previous: this.snapshot }) });
      this.version = next.version;
      this.snapshot = next;
      this.selection = selection;
      // Cached identities carry steps worked out on the old set's plans (never used again: steps are kept per
      // plan); forgetting the identities lets the old set be collected.
      this.identities.clear();
      this.buckets.retain(new Set(next.inbounds.filter((i) => i.from.MeshRateLimit || i.rules.MeshRateLimit).map((i) => i.inbound.name)));
      return { ok: true, version: next.version, policies: next.policies.length, ...(selection ? { selection } : {}), droppedEdits: routeEditDrops(next.outbound.routes) };
    } catch (err) {
      this.opts.log?.error({ err }, "policy compile failed; keeping the previous policy set");
      return { ok: false, version: this.version, policies: this.snapshot?.policies.length ?? 0, error: (err as Error).message };
    }
  }

  decide(facts: RequestFacts): Decision {
    let ev: Evaluation;
    try {
      ev = this.evaluate(facts);
    } catch (err) {
      this.opts.log?.error({ err, requestId: facts.requestId, direction: facts.direction }, "policy evaluation failed");
      return evaluationFailed(facts, err);
    }
    // Every decision gets one debug line from the transport (with its stream id); a shadow deny is
    // also worth an info line on its own, since nothing else shows it.
    const e = ev.decision.explain;
    if (e.action === "shadow-deny") {
      this.opts.log?.info({ requestId: facts.requestId, direction: facts.direction, kind: e.kind, policy: e.policy, rule: e.rule, reason: e.reason }, "policy would deny (AllowWithShadowDeny)");
    }
    // Every evaluation builds a new Decision object, so attaching the audit to it is safe.
    if (this.opts.audit) ev.decision.audit = () => auditOf(ev.identity, ev.trace, ev.outbound);
    return ev.decision;
  }

  /** Full evaluation with its trace; used by decide() and by /explain (with dryRun). */
  evaluate(facts: RequestFacts, over: EvaluateOverrides = {}): Evaluation {
    const snap = this.snapshot;
    const ctx: EvalContext = {
      nowMs: this.nowMs(),
      random: this.random,
      buckets: this.buckets,
      dryRun: over.dryRun ?? false,
    };
    if (!snap) {
      const explain = { action: "not-ready" as const, kind: "none" as const, reason: "no policy set loaded yet" };
      const decision: Decision = this.opts.beforeFirstSync === "allow" ? { type: "continue", explain } : respond(503, "policies not loaded yet", [], explain, ctx);
      return { decision, trace: [] };
    }
    if (facts.direction === "outbound") {
      const outbound = decideOutbound(snap.outbound, facts);
      return { decision: outbound.decision, trace: [], outbound, snapshot: snap };
    }
    // Kuma 2.12+ serves a proxy with mTLS off (Mesh mTLS off, no MeshIdentity) in plaintext: no peer identity.
    const plaintext = snap.traits.meshIdentity && snap.mtls === false && snap.identity === undefined;
    const identity = over.identity ?? this.identities.get(facts, { mesh: snap.dataplane.mesh, trustKumaTagsHeader: this.opts.trustKumaTagsHeader ?? false, plaintext });
    const inbound = pickInbound(snap, facts, over.inbound);
    if (!inbound) {
      return { decision: { type: "continue", explain: { action: "allow", kind: "none", reason: "dataplane has no inbound" } }, identity, trace: [], snapshot: snap };
    }
    const { decision, trace } = decideInbound(inbound, identity, ctx, { traits: snap.traits, mtls: snap.mtls, identity: snap.identity, trustDomains: snap.trustDomains });
    return { decision, identity, inbound, trace, snapshot: snap };
  }
}

/**
 * The decision when evaluating a request threw (a bug, never a policy's doing). An inbound request fails closed: a
 * 500, as Envoy's ext_proc filter answers a failed processor without failure_mode_allow, since allowing it would
 * skip the MeshTrafficPermission that may deny it. An outbound request continues unedited: outbound policies
 * (routes, faults, rate limits) never grant access, so skipping them widens nothing.
 */
export function evaluationFailed(facts: Pick<RequestFacts, "direction">, err: unknown): Decision {
  const reason = `engine error: ${err instanceof Error ? err.message : String(err)}`;
  if (facts.direction === "outbound") return { type: "continue", explain: { action: "allow", kind: "none", reason } };
  return { type: "respond", status: 500, body: "policy evaluation failed", headers: [], explain: { action: "deny", kind: "none", reason } };
}

/** One inbound: the only one, or the one named/numbered like `name`, or the listener's (facts.inbound), or the one on :authority's port. */
function pickInbound(snap: Snapshot, facts: RequestFacts, name?: string): InboundPlan | undefined {
  const all = snap.inbounds;
  if (name !== undefined) return all.find((i) => i.inbound.name === name || String(i.inbound.port) === name);
  if (facts.inbound !== undefined) {
    const named = all.find((i) => i.inbound.name === facts.inbound || String(i.inbound.port) === facts.inbound);
    if (named) return named;
  }
  if (all.length <= 1) return all[0];
  const port = /:(\d+)$/.exec(facts.authority)?.[1];
  return all.find((i) => port !== undefined && String(i.inbound.port) === port) ?? all[0];
}
