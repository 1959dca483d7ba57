// mesh mtls › a Mesh's mTLS is on only when `mtls.enabledBackend` names one of its backends (Kuma's
// MeshResource.MTLSEnabled at v2.14.3: `enabledBackend != ""`): backends listed without an enabled one mean
// mTLS off, so MeshTrafficPermission does not apply and no MTP does not deny.
import test from "ava";
import { resourceFromObject, type MeshResource } from "../../extproc/policy/documents/resources.js";
import { MTLS_MESH, ORDERS_DATAPLANE, yamlEngine } from "./yaml-engine.js";

const BACKENDS_ONLY = `
type: Mesh
name: default
mtls: {backends: [{name: ca-1, type: builtin}, {name: ca-2, type: provided}]}
`;
const DENY_ALL = `
type: MeshTrafficPermission
mesh: default
name: deny-all
spec:
  rules: [{default: {deny: [{spiffeID: {type: Prefix, value: "spiffe://default.z1.mesh.local"}}]}}]
`;
const web = { inbound: "http", client: { spiffeID: "spiffe://default.z1.mesh.local/ns/shop/sa/web" } };

test("mesh mtls › a Mesh with backends but no enabledBackend is accepted with mTLS off", (t) => {
  for (const doc of [
    { type: "Mesh", name: "default", mtls: { backends: [{ name: "ca-1", type: "builtin" }] } },
    { type: "Mesh", name: "default", mtls: { backends: [{ name: "ca-1", type: "builtin" }], enabledBackend: "" } },
    { kind: "Mesh", metadata: { name: "default" }, spec: { mtls: { backends: [{ name: "ca-1", type: "builtin" }] } } },
  ]) {
    const r = resourceFromObject(doc);
    t.deepEqual(r.violations, [], JSON.stringify(doc));
    t.false((r.resource as MeshResource).mtlsEnabled, JSON.stringify(doc));
  }
  // while naming one of the backends turns it on
  const on = resourceFromObject({ type: "Mesh", name: "default", mtls: { backends: [{ name: "ca-1", type: "builtin" }], enabledBackend: "ca-1" } });
  t.true((on.resource as MeshResource).mtlsEnabled);
});

test("mesh mtls › with backends but no enabledBackend, no MeshTrafficPermission allows and a deny-all does not apply", (t) => {
  // given the Mesh lists CA backends but enables none, and no MTP
  const none = yamlEngine([BACKENDS_ONLY, ORDERS_DATAPLANE].join("\n---\n"));
  // when web calls; then it passes (mTLS off: nothing to deny by default)
  t.is(none.ask(web).type, "continue");
  // given a deny-all MTP too; then it does not apply (mTLS off), web still passes
  const denyAll = yamlEngine([BACKENDS_ONLY, ORDERS_DATAPLANE, DENY_ALL].join("\n---\n"));
  const d = denyAll.ask(web);
  t.is(d.type, "continue");
  t.regex(d.explain.reason, /mTLS is off/);
});

test("mesh mtls › the same setup with an enabled backend denies (the control case)", (t) => {
  // given mTLS on and no MTP; then web is denied
  t.is(yamlEngine([MTLS_MESH, ORDERS_DATAPLANE].join("\n---\n")).ask(web).type, "respond");
  // and with the deny-all; then denied by it
  const d = yamlEngine([MTLS_MESH, ORDERS_DATAPLANE, DENY_ALL].join("\n---\n")).ask(web);
  t.is(d.type, "respond");
  t.is(d.explain.policy, "deny-all");
});
