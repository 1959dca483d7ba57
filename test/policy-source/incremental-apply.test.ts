// A control-plane source applies a change at the cost of what changed: an unchanged item reuses its validation
// (the same policy object), a one-policy edit validates one item, the long-poll's answer is the new set (not
// fetched again), and what is applied equals a full validation of the same batch.
import test from "ava";
import { dataplaneFromObject } from "../../extproc/policy/documents/dataplane.js";
import { validateFetched } from "../../extproc/policy-source/resource-set.js";
import { ValidationMemo } from "../../extproc/policy-source/validation-memo.js";
import type { Resource } from "../../extproc/kuma-rest/resources.js";
import { call, controlPlaneFor, eventually } from "../control-plane/helpers.js";
import { sourceFor } from "./harness.js";

const dpDoc = { type: "Dataplane", mesh: "default", name: "a", networking: { address: "127.0.0.1", inbound: [{ port: 8080, tags: { "kuma.io/service": "svc-a" } }] } };
const mtp = (i: number, allow = `client-${i}`) => ({
  type: "MeshTrafficPermission",
  mesh: "default",
  name: `p-${i}`,
  spec: { targetRef: { kind: "MeshService", name: "svc-a" }, from: [{ targetRef: { kind: "MeshService", name: allow }, default: { action: "Allow" } }] },
});

test("incremental apply › given a source on its own set, when one of 30 policies is edited, then one item is parsed and validated, the rest reuse their objects, and the set comes in the long-poll's answer", async (t) => {
  const { cp } = await controlPlaneFor(t);
  await call(cp.url, "PUT", "/meshes/default/dataplanes/a", dpDoc);
  for (let i = 0; i < 30; i++) await call(cp.url, "PUT", `/meshes/default/meshtrafficpermissions/p-${i}`, mtp(i));
  const dp = dataplaneFromObject(dpDoc).dataplane!;
  const { source, applied } = sourceFor(cp.url, { dataplane: () => dp });
  t.teardown(() => source.stop());
  await source.start();
  t.is(applied.length, 1);
  t.is(source.held.memo.validated, 30, "the first set validates every item");
  const first = new Map(applied[0]!.policies.map((p) => [p.name, p]));
  // 200 answers of the set route that were not long-polls (those count under their own route), from the control
  // plane's request histogram
  const setGets = async () =>
    (await (await fetch(`${cp.url}/metrics`)).text())
      .split("\n")
      .filter((l) => l.startsWith("meshext_control_plane_http_request_duration_seconds_count{") && l.includes("policy-set") && l.includes('status="200"'))
      .reduce((n, l) => n + Number(l.split(" ").at(-1)), 0);
  const servedBefore = await setGets();
  const itemsBefore = new Map(source.held.inForceItems);
  // when p-7 now allows another client
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p-7", mtp(7, "ops"));
  t.true(await eventually(() => applied.length === 2, 5000));
  // then only p-7 was validated again, and every other policy is the very object already in force
  t.is(source.held.memo.validated, 1);
  t.is(source.held.memo.reused, 29);
  const second = applied[1]!.policies;
  t.is(second.length, 30);
  for (const p of second) {
    if (p.name === "p-7") t.not<unknown, unknown>(p, first.get("p-7"));
    else t.is<unknown, unknown>(p, first.get(p.name), `${p.name} reused`);
  }
  // and the items served as they were are the objects read from the first answer: not parsed again
  t.is(source.held.inForceItems.size, 30);
  for (const [key, item] of source.held.inForceItems) {
    if (key.endsWith("p-7")) t.not<unknown, unknown>(item, itemsBefore.get(key));
    else t.is<unknown, unknown>(item, itemsBefore.get(key), `${key} not parsed again`);
  }
  // and the set was not fetched again after the long-poll answered with it
  await new Promise((r) => setTimeout(r, 200));
  t.true(servedBefore > 0, "the set's first read is counted");
  t.is((await setGets()) - servedBefore, 0, "no read besides the long-poll's answer");
});

test("incremental apply › given a memo over a batch, when the same items come again with one changed and one rejected, then the results equal validating the batch afresh", (t) => {
  const memo = new ValidationMemo();
  const text = (items: Resource[]) => items.map((i) => JSON.stringify(i));
  const batch1 = [mtp(1), mtp(2), mtp(3)] as unknown as Resource[];
  validateFetched(batch1, "default", "2.14.3", undefined, { texts: text(batch1), memo });
  const broken = { ...mtp(3), spec: { targetRef: { kind: "NoSuchKind" } } };
  const batch2 = [mtp(1), mtp(2, "ops"), broken] as unknown as Resource[];
  const withMemo = validateFetched(batch2, "default", "2.14.3", undefined, { texts: text(batch2), memo });
  const afresh = validateFetched(batch2, "default", "2.14.3");
  t.is(memo.validated, 2);
  t.is(memo.reused, 1);
  t.deepEqual(withMemo.policies, afresh.policies);
  t.deepEqual(withMemo.rejected, afresh.rejected);
  t.deepEqual(withMemo.good, afresh.good);
});

test("incremental apply › given a memo, when the Kuma version changes, then every item is validated again under it", (t) => {
  const memo = new ValidationMemo();
  const batch = [mtp(1), mtp(2)] as unknown as Resource[];
  const texts = batch.map((i) => JSON.stringify(i));
  validateFetched(batch, "default", "2.14.3", undefined, { texts, memo });
  validateFetched(batch, "default", "2.14.3", undefined, { texts, memo });
  t.is(memo.validated, 0);
  validateFetched(batch, "default", "2.6.0", undefined, { texts, memo });
  t.is(memo.validated, 2);
});
