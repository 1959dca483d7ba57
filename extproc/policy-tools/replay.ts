// what-if replay: each recorded decision decided again by the candidate policy set, for the dataplane the record
// names, and compared with what was recorded. Chance is kept out of the comparison: a record where a fault
// fired is replayed with every fault firing (it is unchanged when the same policy still faults it), any other with
// only 100% faults; a rate-limited record is unchanged when a limit of the same policy still applies to it.
import { outcomeOf } from "../decision-log/record.js";
import type { Decision } from "../decision.js";
import type { PolicyEngine } from "../policy/decide/engine.js";
import type { Dataplane } from "../policy/documents/dataplane.js";
import type { MeshResources } from "../policy/documents/resources.js";
import type { KumaVersion } from "../policy/model/kuma-version.js";
import type { Policy, RouteToItem } from "../policy/model/types.js";
import { engineFor, FAULTS_ALWAYS, FAULTS_NEVER } from "./engine-set.js";
import { readRecord, RecordedIdentities, type Recorded, type ReplayInput } from "./replay-record.js";

export interface Side extends Recorded {
  reason?: string;
}

export interface Change {
  line: number;
  time?: string;
  requestId?: string;
  dataplane: string;
  direction: string;
  method: string;
  path: string;
  authority: string;
  client?: string;
  change: string;
  before: Side;
  after: Side;
}

export interface WhatIfReport {
  records: number;
  replayed: number;
  unchanged: number;
  changed: number;
  /** Lines that are not decision records: counted and skipped. */
  malformed: number;
  malformedExamples: Array<{ line: number; why: string }>;
  /** Records that could not be replayed, by reason. */
  unreplayable: Record<string, number>;
  /** Replayed outbound records whose candidate routes match on headers or a query string the log did not keep. */
  approximate: number;
  /** Changed decisions per change class (`allow→deny`, `deny (other deciding policy)`, …). */
  classes: Record<string, number>;
  examples: Change[];
}

export interface ReplayOptions {
  dataplanes: readonly Dataplane[];
  policies: readonly Policy[];
  resources: MeshResources;
  kumaVersion?: KumaVersion;
  /** Changes kept as examples (the first ones). */
  examples: number;
}

interface DataplaneReplay {
  engine: PolicyEngine;
  identities: RecordedIdentities;
  /** Header names (lower case) the candidate routes match on, and whether any matches a query parameter. */
  routeHeaders: string[];
  routeQuery: boolean;
}

const MALFORMED_EXAMPLES = 5;

/** Changed decisions shown in full unless asked otherwise (`what-if --examples`, a dry run's `?examples=`). */
export const DEFAULT_WHAT_IF_EXAMPLES = 20;

export class Replayer {
  private readonly replays = new Map<Dataplane, DataplaneReplay>();
  private random = FAULTS_NEVER;
  private readonly report: WhatIfReport = { records: 0, replayed: 0, unchanged: 0, changed: 0, malformed: 0, malformedExamples: [], unreplayable: {}, approximate: 0, classes: {}, examples: [] };

  constructor(private readonly opts: ReplayOptions) {}

  /** Replays one log line (`lineNo` from 1, for reports); never throws. */
  line(text: string, lineNo: number): void {
    if (text.trim() === "") return;
    const input = readRecord(text);
    if ("malformed" in input) {
      this.report.malformed++;
      if (this.report.malformedExamples.length < MALFORMED_EXAMPLES) this.report.malformedExamples.push({ line: lineNo, why: input.malformed });
      return;
    }
    this.report.records++;
    try {
      this.replay(input, lineNo);
    } catch (err) {
      this.skip(`engine error: ${(err as Error).message}`);
    }
  }

  result(): WhatIfReport {
    return this.report;
  }

  private skip(reason: string): void {
    this.report.unreplayable[reason] = (this.report.unreplayable[reason] ?? 0) + 1;
  }

  private replay(input: ReplayInput, lineNo: number): void {
    const dp = this.dataplaneOf(input);
    if (typeof dp === "string") return this.skip(dp);
    if (input.before.outcome === "not-ready") return this.skip("decided before any policy set was loaded");
    const inbound = input.facts.direction === "inbound";
    if (inbound && !input.client) return this.skip("no client identity recorded");
    const r = this.replayFor(dp);
    const chance = input.before.outcome === "abort" || input.before.outcome === "delay";
    this.random = chance ? FAULTS_ALWAYS : FAULTS_NEVER;
    const ev = r.engine.evaluate(input.facts, { dryRun: true, ...(inbound ? { identity: r.identities.get(input.client!) } : {}) });
    if (!inbound && this.approximate(r, input)) this.report.approximate++;
    this.report.replayed++;
    let after = sideOf(ev.decision);
    if (chance && (after.outcome === "abort" || after.outcome === "delay") && after.policy === input.before.policy) after = { ...input.before, reason: after.reason };
    if (input.before.outcome === "rate-limit" && after.outcome !== "deny") {
      const limiting = ev.trace.find((t) => t.kind === "MeshRateLimit" && t.outcome !== "rate limiting disabled");
      const names = new Set([...(limiting?.matches ?? []).flatMap((m) => m.items.map((i) => i.policy.name)), ...(limiting?.hits ?? []).map((h) => h.policy.name)]);
      if (limiting && input.before.policy !== undefined && names.has(input.before.policy)) after = { ...input.before, reason: `${limiting.outcome}; still limited under the recorded load` };
    }
    const change = changeClass(input.before, after);
    if (!change) {
      this.report.unchanged++;
      return;
    }
    this.report.changed++;
    this.report.classes[change] = (this.report.classes[change] ?? 0) + 1;
    if (this.report.examples.length < this.opts.examples) this.report.examples.push(changeOf(input, lineNo, dp, change, after));
  }

  private dataplaneOf(input: ReplayInput): Dataplane | string {
    const all = this.opts.dataplanes;
    if (input.dataplane === undefined) return all.length === 1 ? all[0]! : "no dataplane named in the record (pass exactly one --dataplane to replay such records)";
    const found = all.find((d) => d.name === input.dataplane && (input.mesh === undefined || d.mesh === input.mesh));
    return found ?? `dataplane ${input.mesh ? input.mesh + "/" : ""}${input.dataplane} not among the dataplanes given`;
  }

  private replayFor(dp: Dataplane): DataplaneReplay {
    let r = this.replays.get(dp);
    if (!r) {
      const engine = engineFor(dp, this.opts.policies, this.opts.resources, { kumaVersion: this.opts.kumaVersion, random: () => this.random() });
      const matches = (engine.current()?.outbound.routes ?? []).flatMap((p) => (p.spec.to ?? []).flatMap((t) => ((t as RouteToItem).rules ?? []).flatMap((rule) => rule.matches ?? [])));
      const routeHeaders = [...new Set(matches.flatMap((m) => (m.headers ?? []).map((h) => h.name.toLowerCase())))];
      r = { engine, identities: new RecordedIdentities(dp.mesh), routeHeaders, routeQuery: matches.some((m) => (m.queryParams ?? []).length > 0) };
      this.replays.set(dp, r);
    }
    return r;
  }

  private approximate(r: DataplaneReplay, input: ReplayInput): boolean {
    if (r.routeQuery && !input.facts.path.includes("?")) return true;
    return r.routeHeaders.some((h) => !input.facts.headers.has(h));
  }
}

function sideOf(d: Decision): Side {
  const e = d.explain;
  return { outcome: outcomeOf(d), ...(d.type === "respond" ? { status: d.status } : {}), kind: e.kind, ...(e.policy ? { policy: e.policy } : {}), ...(e.rule ? { rule: e.rule } : {}), reason: e.reason };
}

/** `allow→deny`, `deny (other deciding policy)`, or undefined when nothing that matters changed. */
function changeClass(before: Recorded, after: Side): string | undefined {
  if (before.outcome !== after.outcome) return `${before.outcome}→${after.outcome}`;
  if (before.status !== after.status) return `${before.outcome} (other status)`;
  if (before.policy !== after.policy) return `${before.outcome} (other deciding policy)`;
  return undefined;
}

function changeOf(input: ReplayInput, lineNo: number, dp: Dataplane, change: string, after: Side): Change {
  const r = input.raw;
  const f = input.facts;
  return {
    line: lineNo,
    ...(typeof r.time === "string" ? { time: r.time } : {}),
    ...(f.requestId ? { requestId: f.requestId } : {}),
    dataplane: dp.name,
    direction: f.direction,
    method: f.method,
    path: f.path,
    authority: f.authority,
    ...(input.client ? { client: input.client.spiffe ?? input.client.tags } : {}),
    change,
    before: input.before,
    after,
  };
}
