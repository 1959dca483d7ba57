// Query strings carry tokens (`?access_token=…`): the decision log records the path without its query
// string unless --decision-log-query asks for it.
import test from "ava";
import { loadSidecarConfig } from "../../extproc/config/sidecar.js";
import type { Decision, RequestFacts } from "../../extproc/decision.js";
import { decisionRecord } from "../../extproc/decision-log/record.js";

const facts: RequestFacts = { direction: "inbound", method: "GET", path: "/orders/7?access_token=s3cr3t&x=1", authority: "a", scheme: "http", headers: new Map(), peerUriSans: [] };
const decision: Decision = { type: "continue", explain: { action: "allow", kind: "none", reason: "r" } };

test("decision log › given a request with a query string, when it is recorded by default, then the path has no query string", (t) => {
  const record = decisionRecord(facts, decision, 0.1, 0, []);
  t.is(record.path, "/orders/7");
  t.notRegex(JSON.stringify(record), /s3cr3t/);
});

test("decision log › given --decision-log-query, when a request is recorded, then the path keeps its query string", (t) => {
  const { config } = loadSidecarConfig(["--decision-log-query"], {});
  t.true(config.decisionLogQuery);
  t.is(loadSidecarConfig([], {}).config.decisionLogQuery, false);
  t.is(decisionRecord(facts, decision, 0.1, 0, [], true).path, "/orders/7?access_token=s3cr3t&x=1");
});
