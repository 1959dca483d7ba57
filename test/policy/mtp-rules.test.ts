// mtp rules › the 2.14 `rules[]` path of MeshTrafficPermission across several rules, and SPIFFE matching as
// Envoy's case-sensitive string matchers do it. Kuma v2.14.3 meshtrafficpermission/xds/rbac_configurer.go:
// every deny of every rule first, then every allow and allowWithShadowDeny (allow), default deny; the shadow
// matcher denies what any rule's allowWithShadowDeny lists, so such a client passes with a shadow deny.
import test from "ava";
import { MTLS_MESH, ORDERS_DATAPLANE, yamlEngine } from "./yaml-engine.js";

const TD = "spiffe://default.z1.mesh.local";
const web = `${TD}/ns/shop/sa/web`;
const api = `${TD}/ns/shop/sa/api`;

const ruleAllowingShop = `
type: MeshTrafficPermission
mesh: default
name: allow-shop
spec:
  rules:
    - default:
        allow: [{spiffeID: {type: Prefix, value: "${TD}/ns/shop"}}]
`;
const ruleShadowingWeb = `
type: MeshTrafficPermission
mesh: default
name: shadow-web
spec:
  rules:
    - default:
        allowWithShadowDeny: [{spiffeID: {type: Exact, value: "${web}"}}]
`;

const ask = (e: ReturnType<typeof yamlEngine>, spiffeID: string) => e.ask({ inbound: "http", client: { spiffeID } });

for (const [order, docs] of [
  ["allow rule first", [ruleAllowingShop, ruleShadowingWeb]],
  ["shadow rule first", [ruleShadowingWeb, ruleAllowingShop]],
] as const) {
  test(`mtp rules › a client in one rule's allow and another rule's allowWithShadowDeny passes with a shadow deny (${order})`, (t) => {
    // given two MTPs on the inbound: one allows all of ns/shop, the other lists web under allowWithShadowDeny
    const e = yamlEngine([MTLS_MESH, ORDERS_DATAPLANE, ...docs].join("\n---\n"));
    // when web calls
    const d = ask(e, web);
    // then it passes, reported as a shadow deny by the rule that lists it
    t.is(d.type, "continue");
    t.is(d.explain.action, "shadow-deny");
    t.is(d.explain.policy, "shadow-web");
    t.is(d.explain.rule, "rules[0].default.allowWithShadowDeny[0]");
    // and a shop client only the allow rule lists is a plain allow
    const other = ask(e, api);
    t.is(other.type, "continue");
    t.is(other.explain.action, "allow");
    t.is(other.explain.policy, "allow-shop");
  });
}

test("mtp rules › a deny of one rule beats another rule's allowWithShadowDeny for the same client", (t) => {
  // given web listed under allowWithShadowDeny in one MTP and under deny in another
  const deny = `
type: MeshTrafficPermission
mesh: default
name: deny-web
spec:
  rules:
    - default:
        deny: [{spiffeID: {type: Exact, value: "${web}"}}]
`;
  const e = yamlEngine([MTLS_MESH, ORDERS_DATAPLANE, ruleShadowingWeb, deny].join("\n---\n"));
  // when web calls; then it is denied
  const d = ask(e, web);
  t.is(d.type, "respond");
  t.is(d.type === "respond" ? d.status : 0, 403);
  t.is(d.explain.policy, "deny-web");
});

test("mtp rules › SPIFFE IDs that differ from a rule's value only in letter case do not match it", (t) => {
  // given an allow by Prefix of ns/shop and a deny by Exact of ns/shop/sa/bot
  const policy = `
type: MeshTrafficPermission
mesh: default
name: case
spec:
  rules:
    - default:
        allow: [{spiffeID: {type: Prefix, value: "${TD}/ns/shop"}}, {spiffeID: {type: Exact, value: "${TD}/ns/ops/sa/admin"}}]
        deny: [{spiffeID: {type: Exact, value: "${TD}/ns/shop/sa/bot"}}]
`;
  const e = yamlEngine([MTLS_MESH, ORDERS_DATAPLANE, policy].join("\n---\n"));
  // when clients call whose IDs differ only in case from what is listed
  // then the prefix does not match another case: denied by default, not allowed
  for (const id of [`${TD}/ns/Shop/sa/web`, `${TD}/NS/shop/sa/web`, `${TD}/ns/ops/sa/Admin`]) {
    const d = ask(e, id);
    t.is(d.type, "respond", id);
    t.regex(d.explain.reason, /no allow entry .* matches \(default deny\)/, id);
  }
  // and the exact deny does not match another case either: that client falls under the prefix allow
  const bot = ask(e, `${TD}/ns/shop/sa/Bot`);
  t.is(bot.type, "continue");
  t.is(bot.explain.rule, "rules[0].default.allow[0]");
  // while the listed spellings decide as written
  t.is(ask(e, `${TD}/ns/shop/sa/bot`).type, "respond");
  t.is(ask(e, `${TD}/ns/ops/sa/admin`).type, "continue");
});
