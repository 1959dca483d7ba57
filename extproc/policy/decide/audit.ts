// The decision log's view of one evaluation: the client identity and the policies that matched, in
// evaluation order. Built only when the engine is asked to (PolicyEngineOptions.audit).
import type { DecisionAudit } from "../../decision.js";
import type { ClientIdentity } from "./identity.js";
import { tagSetKey } from "../model/client.js";
import type { KindTrace } from "./trace.js";
import type { OutboundEvaluation } from "./outbound.js";

export function auditOf(identity: ClientIdentity | undefined, trace: readonly KindTrace[], outbound: OutboundEvaluation | undefined): DecisionAudit {
  const matched: string[] = [];
  const seen = new Set<string>();
  const add = (entry: string): void => {
    if (seen.has(entry)) return;
    seen.add(entry);
    matched.push(entry);
  };
  for (const kind of trace) for (const match of kind.matches) for (const item of match.items) add(`${kind.kind}/${item.policy.name} from[${item.index}]`);
  for (const source of outbound?.matched?.rule.sources ?? []) add(`MeshHTTPRoute/${source.policy.name} ${source.rule}`);
  const audit: DecisionAudit = { matched };
  if (identity) audit.client = { tags: identity.key ?? tagSetKey(identity.tags), source: identity.source };
  return audit;
}
