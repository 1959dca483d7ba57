// Prometheus metrics of the ext_proc transport and its decisions, on a Registry passed in.
import { Counter, type Registry } from "prom-client";
import { type CountCell, type HistogramCell, HotCounter, HotHistogram } from "./hot-metrics.js";

/** Memoised cells by label value: the per-request path resolves a label set with one Map lookup. */
function children<T>(make: (label: string) => T): (label: string) => T {
  const cache = new Map<string, T>();
  return (label) => {
    let child = cache.get(label);
    if (child === undefined) {
      child = make(label);
      cache.set(label, child);
    }
    return child;
  };
}

/**
 * children() for three label values, one Map level each: the per-request path looks up the strings it already
 * holds (their hashes are cached) instead of building and hashing a joined key per request.
 */
function children3<T>(make: (a: string, b: string, c: string) => T): (a: string, b: string, c: string) => T {
  const byA = new Map<string, Map<string, Map<string, T>>>();
  return (a, b, c) => {
    let byB = byA.get(a);
    if (byB === undefined) byA.set(a, (byB = new Map()));
    let byC = byB.get(b);
    if (byC === undefined) byB.set(b, (byC = new Map()));
    let cell = byC.get(c);
    if (cell === undefined) byC.set(c, (cell = make(a, b, c)));
    return cell;
  };
}

/** Distinct policies given their own series in meshext_policy_decisions_total; later ones share policy="_other". */
export const MAX_POLICY_SERIES = 100;
export const OTHER_POLICY = "_other";

export class TransportMetrics {
  /** Per stream: cells bumped in place (hot-metrics.ts). */
  readonly streamsOpened: CountCell;
  readonly streamsEnded: CountCell;
  readonly streamsCancelled: CountCell;
  readonly streamsFailed: Counter<"reason">;
  readonly delaysCapped: Counter;
  readonly headerEditsDropped: Counter<"phase" | "reason">;
  readonly connectionsRotated: Counter;
  /** Cells for the hot path, by label value. */
  readonly receivedIn: (phase: string) => CountCell;
  readonly timerFor: (phase: string) => HistogramCell;
  readonly repliedWith: (kind: string) => CountCell;
  readonly immediateResponded: (status: string) => CountCell;
  readonly decidedAs: (kind: string, action: string, direction: string) => CountCell;
  /** For decisions a named policy took. */
  readonly decidedByPolicy: (kind: string, policy: string, action: string) => CountCell;

  constructor(registry: Registry) {
    const registers = [registry];
    const streamsOpened = new HotCounter({ name: "meshext_extproc_streams_opened_total", help: "ext_proc streams opened by Envoy (one per HTTP request).", registers });
    const streamsEnded = new HotCounter({ name: "meshext_extproc_streams_ended_total", help: "ext_proc streams finished with status OK and closed by both sides (a client reset before its own end counts as cancelled).", registers });
    const streamsCancelled = new HotCounter({ name: "meshext_extproc_streams_cancelled_total", help: "ext_proc streams reset by the client before they were over on both sides (Envoy's default close after the last reply, a normal end; or a cancel).", registers });
    this.streamsOpened = streamsOpened.cell();
    this.streamsEnded = streamsEnded.cell();
    this.streamsCancelled = streamsCancelled.cell();
    this.streamsFailed = new Counter({ name: "meshext_extproc_streams_failed_total", help: "ext_proc streams ended with an error status, by reason.", labelNames: ["reason"], registers });
    const messagesReceived = new HotCounter<"phase">({ name: "meshext_extproc_messages_received_total", help: "ProcessingRequest messages received, by phase.", labelNames: ["phase"], registers });
    const replies = new HotCounter<"kind">({ name: "meshext_extproc_replies_total", help: "ProcessingResponse messages sent, by kind.", labelNames: ["kind"], registers });
    const immediateResponses = new HotCounter<"status">({ name: "meshext_extproc_immediate_responses_total", help: "Local replies sent through immediate_response, by HTTP status.", labelNames: ["status"], registers });
    const phaseDuration = new HotHistogram<"phase">({
      name: "meshext_extproc_phase_duration_seconds",
      help: "Time from receiving a ProcessingRequest to sending its reply (excluding injected fault delays), by phase.",
      labelNames: ["phase"],
      buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2],
      registers,
    });
    const decisions = new HotCounter<"kind" | "action" | "direction">({ name: "meshext_decisions_total", help: "Policy decisions, by deciding policy kind, action and direction (inbound/outbound listener).", labelNames: ["kind", "action", "direction"], registers });
    this.connectionsRotated = new Counter({ name: "meshext_extproc_connections_rotated_total", help: "HTTP/2 connections from Envoy asked to reconnect (graceful GOAWAY) after --max-streams-per-connection streams.", registers });
    this.receivedIn = children((phase) => messagesReceived.cell({ phase }));
    this.timerFor = children((phase) => phaseDuration.cell({ phase }));
    this.repliedWith = children((kind) => replies.cell({ kind }));
    this.immediateResponded = children((status) => immediateResponses.cell({ status }));
    this.decidedAs = children3((kind, action, direction) => decisions.cell({ kind, action, direction }));
    const policyDecisions = new HotCounter<"kind" | "policy" | "action">({
      name: "meshext_policy_decisions_total",
      help: `Decisions taken by a named policy, by kind, policy name and action (the first ${MAX_POLICY_SERIES} policies seen get their own series, the rest policy="${OTHER_POLICY}").`,
      labelNames: ["kind", "policy", "action"],
      registers,
    });
    const namedPolicies = new Set<string>();
    this.decidedByPolicy = children3((kind, policy, action) => {
      const policyKey = `${kind}\0${policy}`;
      if (namedPolicies.size < MAX_POLICY_SERIES) namedPolicies.add(policyKey);
      return policyDecisions.cell({ kind, policy: namedPolicies.has(policyKey) ? policy : OTHER_POLICY, action });
    });
    this.delaysCapped = new Counter({ name: "meshext_fault_delays_capped_total", help: "Fault delays shortened to fit Envoy's message_timeout / max_message_timeout.", registers });
    this.headerEditsDropped = new Counter({
      name: "meshext_header_edits_dropped_total",
      help: "Header edits sent that the shipped Envoy config's ext_proc mutation_rules drop (Envoy counts them in rejected_header_mutations), by phase and reason.",
      labelNames: ["phase", "reason"],
      registers,
    });
  }
}
