// PURE: the MeshHTTPRoute header edits Envoy would drop under the shipped ext_proc mutation_rules, found once per
// policy set (a warning at load) and per decision (the /explain reason). Reads edits through applyFilters(), the
// one place route filters become header edits (at load with a placeholder request: only header names matter).
import { describeDropped, droppedEdits, type DroppedEdit } from "../../envoy-mutation-rules.js";
import type { HeaderEdits } from "../../decision.js";
import { applyFilters, type FilterRequest } from "./route-filters.js";
import type { Policy, RouteToItem } from "../model/types.js";

export interface RouteEditDrop extends DroppedEdit {
  policy: string;
  /** e.g. "to[0].rules[1]" */
  rule: string;
  phase: "request" | "response";
}

const PLACEHOLDER_REQUEST: FilterRequest = { scheme: "http", authority: "placeholder", path: "/" };

/** Every edit of every rule of `routes` that Envoy would drop. */
export function routeEditDrops(routes: readonly Policy[]): RouteEditDrop[] {
  const out: RouteEditDrop[] = [];
  for (const policy of routes) {
    if (policy.type !== "MeshHTTPRoute") continue;
    (policy.spec.to ?? []).forEach((raw, i) => {
      (raw as RouteToItem).rules.forEach((r, j) => {
        const edits = applyFilters(r.default?.filters, undefined, r.matches?.[0] ?? {}, PLACEHOLDER_REQUEST, false);
        const rule = `to[${i}].rules[${j}]`;
        for (const d of droppedEdits(edits.request)) out.push({ ...d, policy: policy.name, rule, phase: "request" });
        for (const d of droppedEdits(edits.response)) out.push({ ...d, policy: policy.name, rule, phase: "response" });
      });
    });
  }
  return out;
}

/** "; Envoy drops (ext_proc mutation_rules): request set :scheme (routing-header)", or "" when nothing is dropped. */
export function droppedSuffix(request: HeaderEdits | undefined, response: HeaderEdits | undefined): string {
  const parts = [
    ...(droppedEdits(request).length > 0 ? [`request ${describeDropped(droppedEdits(request))}`] : []),
    ...(droppedEdits(response).length > 0 ? [`response ${describeDropped(droppedEdits(response))}`] : []),
  ];
  return parts.length > 0 ? `; Envoy drops (ext_proc mutation_rules): ${parts.join("; ")}` : "";
}
