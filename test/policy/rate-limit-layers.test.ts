// rate-limit layers › 2.14 MeshRateLimit rules: a rule matching the client's SPIFFE ID is merged over the
// catch-all rules (the base), field by field (meshratelimit/plugin/v1alpha1 at v2.14.3 merges the matching
// confs), so a layer that sets only some fields keeps the base's other fields, e.g. its onRateLimit reply.
import test from "ava";
import type { Decision } from "../../extproc/decision.js";
import { ORDERS_DATAPLANE, yamlEngine } from "./yaml-engine.js";

const TD = "spiffe://default.z1.mesh.local";
const batch = `${TD}/ns/shop/sa/batch`;
const web = `${TD}/ns/shop/sa/web`;

const limits = (layer: string) => `
type: MeshRateLimit
mesh: default
name: orders-limits
spec:
  targetRef: {kind: Mesh, proxyTypes: [Sidecar]}
  rules:
    - default:
        local:
          http:
            requestRate: {num: 2, interval: 10s}
            onRateLimit: {status: 503, headers: {set: [{name: x-limited-by, value: base}]}}
    - matches: [{spiffeID: {type: Exact, value: "${batch}"}}]
      default: {local: {http: ${layer}}}
`;

const reply = (d: Decision) => (d.type === "respond" ? { status: d.status, headers: d.headers } : { status: 0, headers: [] });

test("rate-limit layers › a SPIFFE layer that sets only requestRate keeps the base's onRateLimit reply", (t) => {
  // given a base of 2 per 10s answering 503 + x-limited-by, and a layer of 1 per 10s for batch (rate only)
  const e = yamlEngine([ORDERS_DATAPLANE, limits("{requestRate: {num: 1, interval: 10s}}")].join("\n---\n"));
  const ask = (spiffeID: string) => e.ask({ inbound: "http", client: { spiffeID } });
  // when batch calls twice
  t.is(ask(batch).type, "continue");
  const limited = ask(batch);
  // then the second is limited by the layer's rate, answered with the base's status and header
  t.is(limited.type, "respond");
  t.is(limited.explain.action, "rate-limit");
  t.deepEqual(reply(limited), { status: 503, headers: [["x-limited-by", "base"]] });
  // and web, matched only by the base, has its 2 before the same reply
  t.is(ask(web).type, "continue");
  t.is(ask(web).type, "continue");
  t.deepEqual(reply(ask(web)), { status: 503, headers: [["x-limited-by", "base"]] });
});

test("rate-limit layers › a layer that sets only onRateLimit.status keeps the base's rate and reply headers", (t) => {
  // given the base above and a batch layer that changes only the status to 429
  const e = yamlEngine([ORDERS_DATAPLANE, limits("{onRateLimit: {status: 429}}")].join("\n---\n"));
  const ask = () => e.ask({ inbound: "http", client: { spiffeID: batch } });
  // when batch calls three times; then the base's rate (2) holds, and the reply is 429 with the base's header
  t.is(ask().type, "continue");
  t.is(ask().type, "continue");
  t.deepEqual(reply(ask()), { status: 429, headers: [["x-limited-by", "base"]] });
});

const layered = `
type: MeshRateLimit
mesh: default
name: layered
spec:
  targetRef: {kind: Mesh, proxyTypes: [Sidecar]}
  rules:
    - matches: [{spiffeID: {type: Exact, value: "${web}"}}]
      default: {local: {http: {requestRate: {num: 1, interval: 10s}}}}
    - matches: [{spiffeID: {type: Prefix, value: "${TD}/ns/shop"}}]
      default: {local: {http: {requestRate: {num: 3, interval: 10s}}}}
    - matches: [{spiffeID: {type: Prefix, value: "${TD}"}}]
      default: {local: {http: {requestRate: {num: 4, interval: 10s}}}}
    - default: {local: {http: {requestRate: {num: 6, interval: 10s}}}}
`;

/** How many of `n` requests in one instant pass before the first 429. */
const passes = (ask: () => Decision, n = 10): number => {
  let passed = 0;
  for (let i = 0; i < n; i++) if (ask().type === "continue") passed++;
  return passed;
};

test("rate-limit layers › the most specific layer decides whatever the rule order: Exact, then the longest Prefix, then the base", (t) => {
  // Given layers listed most specific first: web exact (1), the shop namespace (3), the trust domain (4), a base of 6
  const e = yamlEngine([ORDERS_DATAPLANE, layered].join("\n---\n"));
  const ask = (spiffeID?: string) => () => e.ask({ inbound: "http", client: spiffeID ? { spiffeID } : {} });
  // When each kind of client sends 10 requests at once
  // Then web gets the exact layer's 1, batch the namespace's 3, a client of another namespace the trust domain's 4,
  // and a client with no SPIFFE ID the base's 6
  t.is(passes(ask(web)), 1);
  t.is(passes(ask(batch)), 3);
  t.is(passes(ask(`${TD}/ns/billing/sa/api`)), 4);
  t.is(passes(ask()), 6);
});

test("rate-limit layers › each layer's clients share that layer's bucket, apart from the base's", (t) => {
  // Given the same layers
  const e = yamlEngine([ORDERS_DATAPLANE, layered].join("\n---\n"));
  const ask = (spiffeID?: string) => () => e.ask({ inbound: "http", client: spiffeID ? { spiffeID } : {} });
  // When two clients of the shop namespace layer and two of no identity take turns
  const other = `${TD}/ns/shop/sa/report`;
  const shop = [ask(batch)(), ask(other)(), ask(batch)(), ask(other)()].map((d) => d.type);
  const plain = passes(ask(), 6);
  // Then the namespace layer's 3 are shared by both shop clients, and the base's 6 were all left for the others
  t.deepEqual(shop, ["continue", "continue", "continue", "respond"]);
  t.is(plain, 6);
});
