// End to end without the lead's composition: the embedded control plane → HttpPolicySource → PolicyEngine.
// A PUT through the API changes the engine's next decision within a second (long-poll).
import test from "ava";
import { silentLogger } from "../../extproc/log.js";
import { dataplaneFromTags } from "../../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../../extproc/policy/decide/engine.js";
import { call, eventually, mtp, startTestControlPlane, tempDir } from "../control-plane/helpers.js";
import { inboundFacts as facts, sourceFor } from "./harness.js";


test("engine-e2e › a MeshTrafficPermission PUT through the API changes the next decision", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/allow-all", mtp("allow-all", "Allow"));
  const engine = new PolicyEngine({ dataplane: dataplaneFromTags("default", "kuma.io/service=backend", "backend-1").dataplane!, trustKumaTagsHeader: true });
  const { source } = sourceFor(cp.url, { apply: (policies) => void engine.replace(policies), log: silentLogger() });
  t.teardown(async () => {
    await source.stop();
    await cp.stop();
    await dir.remove();
  });
  await source.start();
  t.is(engine.decide(facts("intruder")).type, "continue");
  const deny = {
    type: "MeshTrafficPermission",
    mesh: "default",
    name: "deny-intruder",
    spec: { targetRef: { kind: "MeshService", name: "backend" }, from: [{ targetRef: { kind: "MeshService", name: "intruder" }, default: { action: "Deny" } }] },
  };
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/deny-intruder", deny)).status, 201);
  const putAt = Date.now(); // acknowledged = durable: the follow time starts here
  t.true(await eventually(() => engine.decide(facts("intruder")).type === "respond"));
  t.true(Date.now() - putAt < 1000, `followed after ${Date.now() - putAt}ms`);
  const denied = engine.decide(facts("intruder"));
  t.is(denied.type === "respond" ? denied.status : 0, 403);
  t.is(engine.decide(facts("friend")).type, "continue", "other clients still allowed");
});
