// MeshIdentity and MeshTrust from Kuma's REST lists (a stand-in), in process: they read exactly as from a policy directory, and an invalid new version keeps the last good one.
import test from "ava";
import { stringify } from "yaml";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import { resourcesOf } from "../../extproc/policy/documents/resources.js";
import { eventually, meshIdentity as identity } from "../control-plane/helpers.js";
import { startFakeKuma } from "./fake-kuma.js";
import { sourceFor } from "./harness.js";
import { allowWebToOrders, TRUST_PEM } from "./fixtures.js";


test("mesh identity › from Kuma's REST lists, MeshIdentity and MeshTrust read as from a directory; an invalid new version keeps the last good one", async (t) => {
  const kuma = await startFakeKuma();
  const good = identity("orders", { app: "orders" });
  const trust = { type: "MeshTrust", mesh: "default", name: "zone-1", spec: { trustDomain: "default.zone-1.mesh.local", caBundles: [{ type: "Pem", pem: { value: TRUST_PEM } }] } };
  kuma.items.set("meshtrafficpermissions", [allowWebToOrders]);
  kuma.items.set("meshidentities", [{ ...good, status: { conditions: [{ type: "Ready", status: "True" }] } }]);
  kuma.items.set("meshtrusts", [trust]);
  const { source, applied, metric } = sourceFor(kuma.url, { pollIntervalMs: 100 });
  t.teardown(async () => {
    await source.stop();
    await kuma.close();
  });
  await source.start();
  // given the same documents in a policy directory, then the engine gets the same resources from both
  const fromDir = resourcesOf(parsePolicyText([good, trust].map((d) => stringify(d)).join("---\n")).resources);
  t.deepEqual(applied.at(-1)!.resources?.identities, fromDir.identities);
  t.deepEqual(applied.at(-1)!.resources?.trusts, fromDir.trusts);
  t.true(kuma.requests.some((r) => r.startsWith("GET /meshes/default/meshidentities")));

  // when Kuma serves an invalid new version (a Bundled provider without its configuration)
  kuma.items.set("meshidentities", [{ ...good, spec: { ...good.spec, provider: { type: "Bundled" } } }]);
  t.true(await eventually(async () => (await metric("meshext_control_plane_rejected_policies")) === 1, 5000));
  // then the last good version stays in force
  t.deepEqual(applied.at(-1)!.resources?.identities?.map((i) => i.name), ["orders"]);
  // and a Kuma before 2.12 (no such lists: 404) just has none
  kuma.items.delete("meshidentities");
  kuma.items.delete("meshtrusts");
  t.true(await eventually(() => applied.at(-1)!.resources?.identities?.length === 0 && applied.at(-1)!.resources?.trusts?.length === 0, 5000));
});
