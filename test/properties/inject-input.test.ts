// Properties of `meshext inject`'s input reader: any text — YAML, JSON, workloads with random fields — is
// injected or refused with a failure code and a message; it never throws, and refusing writes nothing.
import test from "ava";
import fc from "fast-check";
import { stringify } from "yaml";
import { injectText } from "../../extproc/inject/injector.js";
import { NO_PATCHES } from "../../extproc/inject/patch-source.js";
import { renderSidecars } from "../../extproc/inject/render.js";
import { fixture, settings } from "../inject/helpers.js";
import { budget, yamlish } from "./budget.js";

const rendered = renderSidecars(settings());
const kinds = fc.constantFrom("Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "List", "Service", "");
const workload = fc
  .record(
    {
      apiVersion: fc.constantFrom("v1", "apps/v1", "batch/v1", "x"),
      kind: kinds,
      metadata: fc.oneof(fc.anything({ maxDepth: 1 }), fc.record({ name: fc.string({ maxLength: 8 }), namespace: fc.string({ maxLength: 8 }), annotations: fc.dictionary(fc.constantFrom("kuma.io/container-patches", "x"), fc.anything({ maxDepth: 1 })) }, { requiredKeys: [] })),
      spec: fc.oneof(
        fc.anything({ maxDepth: 3 }),
        fc.record({ containers: fc.array(fc.record({ name: fc.string({ maxLength: 6 }), image: fc.string({ maxLength: 6 }), ports: fc.anything({ maxDepth: 1 }) }, { requiredKeys: [] }), { maxLength: 2 }) }, { requiredKeys: [] }),
        fc.record({ template: fc.record({ spec: fc.record({ containers: fc.array(fc.record({ name: fc.string({ maxLength: 6 }) }), { maxLength: 2 }) }) }) }),
      ),
      items: fc.array(fc.anything({ maxDepth: 2 }), { maxLength: 2 }),
    },
    { requiredKeys: ["kind"] },
  );
const input = fc.oneof(
  fc.string({ maxLength: 300 }),
  yamlish,
  workload.map((w) => stringify(w)),
  workload.map((w) => JSON.stringify(w, null, 2)),
  fc.array(workload, { minLength: 2, maxLength: 3 }).map((ws) => ws.map((w) => stringify(w)).join("---\n")),
  fc.nat({ max: 40 }).map((cut) => fixture("deployment.yaml").slice(0, fixture("deployment.yaml").length - cut)),
);

test("properties › inject: any input is injected or refused with a code and message, never a throw", async (t) => {
  await fc.assert(
    fc.asyncProperty(input, async (text) => {
      const outcome = await injectText(text, rendered, [], NO_PATCHES);
      if (outcome.ok) return typeof outcome.output === "string";
      return typeof outcome.failure.code === "string" && outcome.failure.message.length > 0 && !outcome.failure.message.includes("\n    at ");
    }),
    budget(400),
  );
  t.pass();
});

// Found by the property above (seed 1197493968): a workload whose metadata was a sequence made the YAML edit
// that adds the annotations throw inside the yaml library.
test("properties › inject: a workload whose metadata is not a mapping is refused, not thrown", async (t) => {
  const outcome = await injectText("kind: Pod\nmetadata: []\nspec:\n  containers: []\n", rendered, [], NO_PATCHES);
  t.false(outcome.ok);
  if (!outcome.ok) t.is(outcome.failure.code, "workload_invalid");
});
