// rules layers › MeshRateLimit on the 2.14 rules path (rules-decide.ts): which rule's route and bucket a client lands on, which rule an explanation names, and the token buckets behind them.
import test from "ava";
import type { Decision } from "../../extproc/decision.js";
import { explainRequest, parseExplainInput } from "../../extproc/policy/views/explain.js";
import { decidingRule } from "../../extproc/policy/decide/rules-decide.js";
import { BucketStore } from "../../extproc/policy/decide/rate-limit.js";
import { bucketKey } from "../../extproc/policy/plans/limit-plan.js";
import type { InboundRuleEntry } from "../../extproc/policy/plans/inbound-rules.js";
import { ORDERS_DATAPLANE, yamlEngine } from "./yaml-engine.js";

const TD = "spiffe://default.z1.mesh.local";
const WEB = `${TD}/ns/shop/sa/web`;
const BATCH = `${TD}/ns/shop/sa/batch`;

const limits = (rules: string) =>
  yamlEngine(
    [
      ORDERS_DATAPLANE,
      `
type: MeshRateLimit
mesh: default
name: limits
spec:
  targetRef: {kind: Mesh, proxyTypes: [Sidecar]}
  rules:
${rules}`,
    ].join("\n---\n"),
  );
const passes = (ask: () => Decision, n = 5): number => {
  let passed = 0;
  for (let i = 0; i < n; i++) if (ask().type === "continue") passed++;
  return passed;
};

test("rules layers › a client with its own SPIFFE rule has its own bucket, even at the base's rate", (t) => {
  // given a base of 1 a minute and a rule for batch of 1 a minute answering 503
  const e = limits(`    - default: {local: {http: {requestRate: {num: 1, interval: 1m}}}}
    - matches: [{spiffeID: {type: Exact, value: "${BATCH}"}}]
      default: {local: {http: {requestRate: {num: 1, interval: 1m}, onRateLimit: {status: 503}}}}
`);
  // when web takes the base's token; then batch still has its own
  t.is(passes(() => e.ask({ inbound: "http", client: { spiffeID: WEB } })), 1);
  t.is(passes(() => e.ask({ inbound: "http", client: { spiffeID: BATCH } })), 1);
});

test("rules layers › an Exact rule outranks a Prefix rule of the same length, whatever their order", (t) => {
  // given a Prefix rule whose value is web's whole ID (3 a minute), after an Exact rule for web (1 a minute)
  const e = limits(`    - matches: [{spiffeID: {type: Exact, value: "${WEB}"}}]
      default: {local: {http: {requestRate: {num: 1, interval: 1m}}}}
    - matches: [{spiffeID: {type: Prefix, value: "${WEB}"}}]
      default: {local: {http: {requestRate: {num: 3, interval: 1m}}}}
`);
  // when web calls; then the Exact rule's rate holds
  t.is(passes(() => e.ask({ inbound: "http", client: { spiffeID: WEB } })), 1);
});

test("rules layers › /explain of a client no rule applies to lists no matched rule", (t) => {
  // given a rule for batch only (no catch-all); when web's request is explained
  const e = limits(`    - matches: [{spiffeID: {type: Exact, value: "${BATCH}"}}]
      default: {local: {http: {requestRate: {num: 1, interval: 1m}}}}
`);
  const { input } = parseExplainInput({ inbound: "http", client: { spiffeID: WEB } }, "default");
  const report = explainRequest(e.engine, input!);
  // then the MeshRateLimit kind matched no rule, and the request continues
  t.is(report.decision.type, "continue");
  t.deepEqual(report.matchedRules?.MeshRateLimit, []);
});

const entry = (policy: string, rule: string, conf: Record<string, unknown>) => ({ policy: { name: policy }, rule, conf }) as unknown as InboundRuleEntry;

test("rules layers › the deciding rule of a field is the last hit that set it, earlier hits searched back", (t) => {
  // given hits where only the first sets `local`; when the rule deciding `local` is asked for; then it is the first
  const hits = [entry("a", "rules[0]", { local: { http: {} } }), entry("b", "rules[1]", { other: 1 }), entry("c", "rules[2]", {})];
  t.deepEqual(decidingRule(hits, "local"), { policy: "a", rule: "rules[0]" });
  t.is(decidingRule(hits, "missing"), undefined);
});

test("rules layers › a bucket asked for by inbound and rate is the one kept under their key", (t) => {
  // given a store; when a bucket is asked for by inbound and rate, then by its key
  const store = new BucketStore();
  const rate = { num: 1, intervalMs: 60_000 };
  const bucket = store.get("http", rate, 0);
  // then both are the same full bucket: one token, then none
  t.is(store.getByKey(bucketKey("http", rate), rate, 0), bucket);
  t.true(bucket.take(0));
  t.false(store.get("http", rate, 0).take(0));
});
