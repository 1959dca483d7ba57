// The 2.10+ rules plan (plans/inbound-rules.ts) called directly: which policies and rules it holds, their order,
// the candidates per SPIFFE ID, the per-client cache, when a match holds, and a match's text in explanations.
import test from "ava";
import { buildRulesPlan, candidateRules, describeMatch, matchHolds, perClient, ruleHolds, RULES_CACHE_ENTRIES, type RulesPlan } from "../../extproc/policy/plans/inbound-rules.js";
import type { Policy, PolicyType, RuleMatch } from "../../extproc/policy/model/types.js";

const A = "spiffe://default/a";
const B = "spiffe://default/b";
const exact = (value: string): RuleMatch => ({ spiffeID: { type: "Exact", value } });
const prefix = (value: string): RuleMatch => ({ spiffeID: { type: "Prefix", value } });
const sni = (value: string): RuleMatch => ({ sni: { type: "Exact", value } });

function policy(name: string, spec: Record<string, unknown>, type: PolicyType = "MeshFaultInjection"): Policy {
  return { type, mesh: "default", name, spec: { targetRef: { kind: "Mesh" }, ...spec } } as unknown as Policy;
}

/** One policy whose rules have these matches (undefined: no `matches`), each rule's default naming it. */
function rulesPolicy(type: PolicyType, ...matches: Array<RuleMatch[] | undefined>): Policy {
  return policy("p", { rules: matches.map((m, i) => ({ ...(m ? { matches: m } : {}), default: { id: i } })) }, type);
}

const ids = (rules: ReadonlyArray<{ conf: Record<string, unknown> }>) => rules.map((r) => r.conf.id);

test("given rules with Exact SPIFFE matches and a catch-all, when candidates are taken per client, then another ID's Exact rules are left out", (t) => {
  const plan = buildRulesPlan("MeshFaultInjection", [rulesPolicy("MeshFaultInjection", [exact(A)], undefined, [exact(B)], [{ ...exact(A), ...sni("x") }])], false)!;
  t.deepEqual(ids(candidateRules(plan, { spiffe: A })), [0, 1, 3]);
  t.deepEqual(ids(candidateRules(plan, { spiffe: B })), [1, 2, 3]);
  t.deepEqual(ids(candidateRules(plan, {})), [1, 3]);
});

test("given MeshTrafficPermission rules without matches, when candidates are taken, then their allow/deny lists of Exact IDs stand for matches", (t) => {
  const mtp = (conf: Record<string, unknown>) => ({ default: conf });
  const p = policy("mtp", { rules: [mtp({ id: 0, allow: [exact(A)] }), mtp({ id: 1, deny: [exact(B)], allowWithShadowDeny: [exact(B)] }), mtp({ id: 2 }), mtp({ id: 3, allow: [prefix(A)] })] }, "MeshTrafficPermission");
  const plan = buildRulesPlan("MeshTrafficPermission", [p], true)!;
  t.deepEqual(ids(candidateRules(plan, { spiffe: A })), [0, 2, 3]);
  t.deepEqual(ids(candidateRules(plan, { spiffe: B })), [1, 2, 3]);
});

test("given a catch-all rule of another kind whose conf has an allow list, when candidates are taken, then it is a candidate for everyone", (t) => {
  const p = policy("mfi", { rules: [{ default: { id: 0, allow: [exact(A)] } }] });
  const plan = buildRulesPlan("MeshFaultInjection", [p], true)!;
  t.deepEqual(ids(candidateRules(plan, { spiffe: B })), [0]);
});

function counted(): { compute: () => undefined; calls: () => number } {
  let n = 0;
  return { compute: () => void n++, calls: () => n };
}

test("given a per-client result that is undefined, when the same client asks again, then it is not computed again", (t) => {
  const plan = buildRulesPlan("MeshFaultInjection", [rulesPolicy("MeshFaultInjection", undefined)], true)!;
  const c = counted();
  t.is(perClient(plan, { spiffe: A, source: "peer-cert" }, c.compute), undefined);
  t.is(perClient(plan, { spiffe: A, source: "peer-cert" }, c.compute), undefined);
  t.is(c.calls(), 1);
});

test("given two clients taking turns, when they ask again, then each result is computed once", (t) => {
  const plan = buildRulesPlan("MeshFaultInjection", [rulesPolicy("MeshFaultInjection", undefined)], true)!;
  let n = 0;
  for (const id of [A, B, A, B]) perClient(plan, { spiffe: id, source: "peer-cert" }, () => n++);
  t.is(n, 2);
});

test("given a full per-client cache, when one more client asks, then the cache starts over (the first client is computed again)", (t) => {
  const plan: RulesPlan = buildRulesPlan("MeshFaultInjection", [rulesPolicy("MeshFaultInjection", undefined)], true)!;
  let n = 0;
  const ask = (i: number) => perClient(plan, { spiffe: `spiffe://default/c${i}`, source: "peer-cert" }, () => n++);
  for (let i = 0; i < RULES_CACHE_ENTRIES; i++) ask(i);
  ask(0);
  t.is(n, RULES_CACHE_ENTRIES, "a full cache still answers");
  ask(RULES_CACHE_ENTRIES);
  ask(0);
  t.is(n, RULES_CACHE_ENTRIES + 2);
});

test("given a rule with an empty matches list, when planned, then it is a catch-all", (t) => {
  for (const expand of [true, false]) {
    const plan = buildRulesPlan("MeshFaultInjection", [rulesPolicy("MeshFaultInjection", [])], expand)!;
    t.is(plan.rules.length, 1);
    t.true(ruleHolds(plan.rules[0]!, {}));
  }
});

test("given MeshRateLimit policies with rules, with from items, with an empty from and with neither, when planned, then only the first two count", (t) => {
  const rules = policy("rules", { rules: [{ default: { id: 0 } }] }, "MeshRateLimit");
  const from = policy("from", { from: [{ targetRef: { kind: "Mesh" }, default: { id: 1 } }] }, "MeshRateLimit");
  const plan = buildRulesPlan("MeshRateLimit", [rules, from, policy("empty", { from: [] }, "MeshRateLimit"), policy("none", {}, "MeshRateLimit")], true)!;
  t.deepEqual(plan.policies.map((p) => p.name), ["rules", "from"]);
  t.deepEqual(plan.rules.map((r) => r.rule), ["rules[0]", "from[0]"]);
  t.deepEqual(plan.ignoredFrom, []);
});

test("given MeshTrafficPermission policies with rules, with from items, with an empty from and with neither, when planned, then only the from items are ignored", (t) => {
  const rules = policy("rules", { rules: [{ default: {} }] }, "MeshTrafficPermission");
  const from = policy("from", { from: [{ targetRef: { kind: "Mesh" }, default: {} }] }, "MeshTrafficPermission");
  const plan = buildRulesPlan("MeshTrafficPermission", [rules, from, policy("empty", { from: [] }, "MeshTrafficPermission"), policy("none", {}, "MeshTrafficPermission")], true)!;
  t.deepEqual(plan.policies.map((p) => p.name), ["rules"]);
  t.deepEqual(plan.ignoredFrom.map((p) => p.name), ["from"]);
});

test("given rules of every specificity, when expanded (2.14), then Exact+sni, Exact, Prefix+sni, Prefix, sni, catch-all; as written (2.12) they keep their order", (t) => {
  const p = rulesPolicy("MeshFaultInjection", undefined, [sni("x")], [prefix("spiffe://")], [{ ...prefix("spiffe://"), ...sni("x") }], [exact(A)], [{ ...exact(A), ...sni("x") }]);
  t.deepEqual(ids(buildRulesPlan("MeshFaultInjection", [p], true)!.rules), [5, 4, 3, 2, 1, 0]);
  t.deepEqual(ids(buildRulesPlan("MeshFaultInjection", [p], false)!.rules), [0, 1, 2, 3, 4, 5]);
});

test("given a rule with two matches, when one of them holds, then the rule holds", (t) => {
  t.true(ruleHolds({ matches: [exact(B), exact(A)] }, { spiffe: A }));
  t.false(ruleHolds({ matches: [exact(B)] }, { spiffe: A }));
  t.true(ruleHolds({}, {}));
});

test("given matches, when asked whether they hold, then an empty match holds for nobody, Exact is equality and Prefix a string prefix", (t) => {
  t.false(matchHolds({}, { spiffe: A, sni: "x" }));
  t.false(matchHolds(exact(B), { spiffe: A }));
  t.false(matchHolds(exact("spiffe://default/"), { spiffe: A }));
  t.true(matchHolds(prefix("spiffe://default/"), { spiffe: A }));
  t.true(matchHolds(exact(A), { spiffe: A }));
  t.false(matchHolds(exact(A), {}));
  t.false(matchHolds({ ...exact(A), ...sni("x") }, { spiffe: A, sni: "y" }));
});

test("given matches, when described for an explanation, then each field is named and joined with 'and'", (t) => {
  t.is(describeMatch(undefined), "*");
  t.is(describeMatch({}), "{}");
  t.is(describeMatch(prefix("spiffe://default/")), "spiffeID Prefix spiffe://default/");
  t.is(describeMatch(sni("orders.mesh")), "sni orders.mesh");
  t.is(describeMatch({ ...exact(A), ...sni("orders.mesh") }), `spiffeID Exact ${A} and sni orders.mesh`);
});
