// parsePolicyTextAsync: the same result as parsePolicyText, with pauses between slices of documents.
import test from "ava";
import { DOCUMENTS_PER_PAUSE, parsePolicyText, parsePolicyTextAsync } from "../../extproc/policy/documents/parse.js";

const doc = (i: number) => `type: MeshTrafficPermission\nname: mtp-${i}\nmesh: default\nspec:\n  targetRef: {kind: MeshService, name: svc-${i}}\n  from:\n    - targetRef: {kind: Mesh}\n      default: {action: ${i % 7 === 0 ? "Maybe" : "Allow"}}\n`;

test("parse › the async parser pauses between slices and matches the sync result", async (t) => {
  // given 100 policy documents, every seventh invalid
  const text = Array.from({ length: 100 }, (_, i) => doc(i)).join("---\n");
  let pauses = 0;
  // when parsed with a counting pause
  const asyncResult = await parsePolicyTextAsync(text, "f.yaml", async () => void pauses++);
  // then it paused once per slice and agrees with the sync parser, rejections included
  t.is(pauses, Math.floor(100 / DOCUMENTS_PER_PAUSE));
  t.deepEqual(asyncResult, parsePolicyText(text, "f.yaml"));
  t.is(asyncResult.policies.length, 85);
  t.is(asyncResult.rejected.length, 15);
  t.is(asyncResult.rejected[0]!.violations[0]!.field, "spec.from[0].default.action");
});
