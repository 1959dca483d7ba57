// inspect › Kuma 2.14's `/_rules` view and "which dataplanes does this policy select", computed from
// conformance inputs and compared with goldens in test/testdata/policy-inspect/.
import test from "ava";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { dataplaneFromObject, type Dataplane } from "../../extproc/policy/documents/dataplane.js";
import { dataplaneRules, dataplanesForPolicy } from "../../extproc/policy/views/inspect.js";
import { parseDocuments, parsePolicyText } from "../../extproc/policy/documents/parse.js";
import { resourcesOf } from "../../extproc/policy/documents/resources.js";
import { assertGolden } from "./golden.js";

const CASES = fileURLToPath(new URL("../../../test/testdata/policy/", import.meta.url));
const GOLDEN = fileURLToPath(new URL("../../../test/testdata/policy-inspect/", import.meta.url));

function load(name: string) {
  const text = readFileSync(join(CASES, `${name}.input.yaml`), "utf8");
  const parsed = parsePolicyText(text, undefined, { kumaVersion: "2.14" });
  const dpDoc = parseDocuments(text).find((d) => (d.value as { type?: string } | undefined)?.type === "Dataplane");
  return { parsed, dp: dataplaneFromObject(dpDoc?.value).dataplane! };
}

for (const name of ["v214-mtp-worked-example", "v214-mrl-base-and-exact-layer", "v214-mhr-to-meshservice-labels-section", "v214-shadow-effect-ignored", "v214-mtp-mtls-off-not-applied"]) {
  test(`inspect › _rules of ${name}`, (t) => {
    // given a conformance input; when its dataplane's rule view is computed; then it matches the golden
    const { parsed, dp } = load(name);
    assertGolden(t, join(GOLDEN, `${name}.rules.golden.json`), dataplaneRules(parsed.policies, dp, { kumaVersion: "2.14", resources: resourcesOf(parsed.resources) }));
  });
}

test("inspect › _rules with includeShadow shows the shadow policy's rules", (t) => {
  // given a shadow MTP; when inspected with and without shadow; then only the shadow view lists its deny
  const { parsed, dp } = load("v214-shadow-effect-ignored");
  const origins = (shadow: boolean) =>
    dataplaneRules(parsed.policies, dp, { includeShadow: shadow }).rules.flatMap((r) => r.inboundRules.flatMap((e) => e.rules.flatMap((x) => x.origin.map((o) => o.resourceMeta.name))));
  t.false(origins(false).includes("shadow-deny-web"));
  t.true(origins(true).includes("shadow-deny-web"));
});

test("inspect › _resources/dataplanes lists the dataplanes a policy's top-level targetRef selects", (t) => {
  // given three dataplanes and a Dataplane-labels policy; when asked which it selects; then only the labelled ones
  const dp = (name: string, labels: Record<string, string>): Dataplane => ({ mesh: "default", name, proxyType: "Sidecar", labels, inbounds: [{ name: "http", declaredName: "http", port: 8080, tags: { "kuma.io/service": name } }] });
  const { parsed } = load("v214-dp-labels-exact");
  const policy = parsed.policies.find((p) => p.name === "orders-allow-shop")!;
  const result = dataplanesForPolicy(policy, [dp("orders-2", { app: "orders" }), dp("payments-1", { app: "payments" }), dp("orders-1", { app: "orders", team: "pay" })]);
  t.deepEqual(result, {
    total: 2,
    items: [
      { type: "Dataplane", mesh: "default", name: "orders-1", labels: { app: "orders", team: "pay" } },
      { type: "Dataplane", mesh: "default", name: "orders-2", labels: { app: "orders" } },
    ],
  });
});
