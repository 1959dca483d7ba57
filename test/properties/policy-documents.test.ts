// Properties of the policy-document parser and validator: any text or value gives policies and rejections
// (each with field paths and messages), never a throw; the YAML pre-parse bound never throws either.
import test from "ava";
import fc from "fast-check";
import { parsePolicyText, validatePolicyObject } from "../../extproc/policy/documents/parse.js";
import { yamlShape } from "../../extproc/policy/documents/yaml-limits.js";
import { stringify } from "yaml";
import { budget, yamlish } from "./budget.js";

const wellFormedRejections = (r: ReturnType<typeof parsePolicyText>) =>
  r.rejected.every((x) => x.violations.length > 0 && x.violations.every((v) => typeof v.field === "string" && typeof v.message === "string" && v.message !== ""));

test("properties › any text parses into policies and well-formed rejections, never a throw", (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.string({ maxLength: 400 }), yamlish), (text) => {
      const r = parsePolicyText(text, "p.yaml");
      return Array.isArray(r.policies) && wellFormedRejections(r);
    }),
    budget(400),
  );
  t.pass();
});

const kinds = fc.constantFrom("MeshTrafficPermission", "MeshFaultInjection", "MeshRateLimit", "MeshHTTPRoute", "Other");
const refKinds = fc.constantFrom("Mesh", "MeshService", "MeshSubset", "MeshServiceSubset", "Dataplane", "Nope");
/** Documents shaped like policies, with wrong and right values mixed in at every level. */
const policyish = fc.record(
  {
    type: kinds,
    name: fc.oneof(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), fc.string({ maxLength: 10 })),
    mesh: fc.constantFrom("default", "other", ""),
    spec: fc.oneof(
      fc.anything({ maxDepth: 3 }),
      fc.record({
        targetRef: fc.record({ kind: refKinds, name: fc.string({ maxLength: 8 }), tags: fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 })) }, { requiredKeys: ["kind"] }),
        from: fc.array(fc.record({ targetRef: fc.record({ kind: refKinds, name: fc.string({ maxLength: 8 }) }, { requiredKeys: ["kind"] }), default: fc.anything({ maxDepth: 3 }) }), { maxLength: 3 }),
      }),
    ),
  },
  { requiredKeys: [] },
);

test("properties › any value validates to a policy or violations with field paths, never a throw", (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.anything({ maxDepth: 4 }), policyish), (value) => {
      const { policy, violations } = validatePolicyObject(value);
      return policy !== undefined ? violations.length === 0 : violations.length > 0 && violations.every((v) => typeof v.field === "string" && v.message !== "");
    }),
    budget(600),
  );
  t.pass();
});

test("properties › a policy document as YAML or JSON text parses like the value itself", (t) => {
  fc.assert(
    fc.property(policyish, fc.boolean(), (doc, asJson) => {
      const direct = validatePolicyObject(doc);
      const parsed = parsePolicyText(asJson ? JSON.stringify(doc) : stringify(doc));
      return (direct.policy !== undefined) === (parsed.policies.length === 1);
    }),
    budget(300),
  );
  t.pass();
});

test("properties › the YAML bound never throws and grows with nesting", (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.string({ maxLength: 400 }), yamlish), fc.integer({ min: 1, max: 100 }), (text, depth) => {
      const shape = yamlShape(text);
      const deeper = yamlShape("- ".repeat(depth) + "x\n");
      return shape.flowDepth >= 0 && shape.blockDepth >= 0 && shape.nodes >= 0 && deeper.blockDepth >= depth;
    }),
    budget(500),
  );
  t.pass();
});
