// Header values with CR, LF or NUL are refused at validation, with the field of each: Envoy does not drop such an edit,
// it fails every request it applies to with 500 (and a local reply loses all its headers), as a real Envoy shows in
// test/envoy-real/invalid-header-values.test.ts. The last good version of the policy stays in force.
import test from "ava";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validatePolicyObject } from "../../extproc/policy/documents/parse.js";
import { DirPolicySource } from "../../extproc/policy-source/dir-source.js";
import type { Policy } from "../../extproc/policy/model/types.js";
import { CONTROL_CHARACTER_MESSAGE } from "../../extproc/policy/documents/validate-confs.js";

const route = (filters: unknown[]) => ({
  type: "MeshHTTPRoute",
  mesh: "default",
  name: "r",
  spec: { targetRef: { kind: "MeshService", name: "backend" }, to: [{ targetRef: { kind: "MeshService", name: "payments" }, rules: [{ matches: [{ path: { type: "PathPrefix", value: "/api" } }], default: { filters } }] }] },
});

const rateLimit = (headers: unknown) => ({
  type: "MeshRateLimit",
  mesh: "default",
  name: "l",
  spec: { targetRef: { kind: "MeshService", name: "backend" }, from: [{ targetRef: { kind: "Mesh" }, default: { local: { http: { requestRate: { num: 1, interval: "1s" }, onRateLimit: { headers } } } } }] },
});

const F = "spec.to[0].rules[0].default.filters";

test("header values › a route with CR, LF and NUL in header edits and paths is refused with every violation listed", (t) => {
  // Given a route whose request edit sets a value with CR, adds one with LF, whose response edit sets one with NUL,
  // and whose URLRewrite paths hold a newline, next to clean values
  const doc = route([
    { type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "x-ok", value: "fine" }, { name: "x-cr", value: "a\rb" }], add: [{ name: "x-lf", value: "a\nb" }] } },
    { type: "ResponseHeaderModifier", responseHeaderModifier: { set: [{ name: "x-nul", value: "a\0b" }] } },
    { type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/v2\r\nx-injected: 1" } } },
    { type: "RequestRedirect", requestRedirect: { path: { type: "ReplaceFullPath", replaceFullPath: "/sso\n" } } },
  ]);
  // When it is validated
  const { policy, violations } = validatePolicyObject(doc, "2.14");
  // Then it is refused, and each bad value is named by its field with the reason
  t.is(policy, undefined);
  t.deepEqual(violations, [
    { field: `${F}[0].requestHeaderModifier.set[1].value`, message: CONTROL_CHARACTER_MESSAGE },
    { field: `${F}[0].requestHeaderModifier.add[0].value`, message: CONTROL_CHARACTER_MESSAGE },
    { field: `${F}[1].responseHeaderModifier.set[0].value`, message: CONTROL_CHARACTER_MESSAGE },
    { field: `${F}[2].urlRewrite.path.replacePrefixMatch`, message: CONTROL_CHARACTER_MESSAGE },
    { field: `${F}[3].requestRedirect.path.replaceFullPath`, message: CONTROL_CHARACTER_MESSAGE },
  ]);
  t.regex(CONTROL_CHARACTER_MESSAGE, /^must not contain CR, LF or NUL/);
});

test("header values › MeshRateLimit onRateLimit headers with CR, LF or NUL are refused", (t) => {
  // Given onRateLimit headers with a LF in a set value and a NUL in an added one
  const { policy, violations } = validatePolicyObject(rateLimit({ set: [{ name: "retry-after", value: "1\n" }], add: [{ name: "x-a", value: "\0" }] }), "2.14");
  // Then both are named
  t.is(policy, undefined);
  t.deepEqual(
    violations.map((v) => v.field),
    ["spec.from[0].default.local.http.onRateLimit.headers.set[0].value", "spec.from[0].default.local.http.onRateLimit.headers.add[0].value"],
  );
});

test("header values › clean values, spaces and tabs included, are accepted", (t) => {
  // Given values Envoy accepts (visible characters, spaces, a tab, UTF-8)
  const doc = route([{ type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "x-a", value: "a b\tc" }, { name: "x-b", value: "é" }] } }]);
  // Then the route validates
  t.deepEqual(validatePolicyObject(doc, "2.14").violations, []);
  t.deepEqual(validatePolicyObject(rateLimit({ set: [{ name: "retry-after", value: "1" }] }), "2.14").violations, []);
});

test("header values › a policy edited to a CR value is rejected and its last good version stays in force", async (t) => {
  // Given a directory source with a good route in force
  const dir = mkdtempSync(join(tmpdir(), "meshext-header-values-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const applied: Policy[][] = [];
  const source = new DirPolicySource({ dir, apply: (p) => void applied.push(p), log: { info: () => {}, warn: () => {}, error: () => {} }, rescanIntervalMs: 0, debounceMs: 20 });
  const edit = (value: string) => JSON.stringify(route([{ type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "x-caller", value }] } }]));
  writeFileSync(join(dir, "route.json"), edit("backend"));
  await source.start();
  t.teardown(() => source.stop());
  // When the file is rewritten with a CR in the value
  writeFileSync(join(dir, "route.json"), edit("backend\r\nx-injected: yes"));
  const report = await source.scan();
  // Then that version is rejected with the field, and the set in force still sets the good value
  t.deepEqual(report.rejected[0]?.violations, [{ field: `${F}[0].requestHeaderModifier.set[0].value`, message: CONTROL_CHARACTER_MESSAGE }]);
  const inForce = applied.at(-1)!.find((p) => p.name === "r");
  t.is(JSON.stringify(inForce?.spec.to).includes('"value":"backend"'), true);
});
