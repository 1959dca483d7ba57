// Builds the admin `POST /explain` handler from a PolicyEngine. Transport-free: the handler takes the raw
// body bytes and returns {status, json}; the composition root registers it with AdminServer.route().
import type { PolicyEngine } from "../decide/engine.js";
import { explainRequest, parseExplainInput } from "./explain.js";
import type { RejectedPolicy } from "../model/types.js";

export interface ExplainReply {
  status: number;
  body: unknown;
}

/**
 * A function from the request body (UTF-8 JSON) to a reply; never throws. `rejected` lists the policy source's
 * current rejections: shown as `rejected` (when there are any) so an operator sees why a policy is not in force.
 */
export function explainHandler(engine: PolicyEngine, rejected: () => readonly RejectedPolicy[] = () => []): (body: Uint8Array | string) => ExplainReply {
  return (raw) => {
    let parsed: unknown;
    try {
      const text = typeof raw === "string" ? raw : new TextDecoder().decode(raw);
      parsed = text.trim() === "" ? {} : JSON.parse(text);
    } catch (err) {
      return { status: 400, body: { error: "body is not JSON", detail: (err as Error).message } };
    }
    const { input, violations } = parseExplainInput(parsed, engine.dataplane.mesh);
    if (!input) return { status: 400, body: { error: "invalid explain request", invalid_parameters: violations } };
    try {
      const refused = rejected();
      return { status: 200, body: { ...explainRequest(engine, input), ...(refused.length ? { rejected: refused } : {}) } };
    } catch (err) {
      return { status: 500, body: { error: (err as Error).message } };
    }
  };
}
