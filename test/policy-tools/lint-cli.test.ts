// `meshext policy lint` through the real binary: the sample policies are clean (deprecation warnings only); every
// violation of a bad file is listed with file, document index, field path and message; the Kuma version chosen
// decides as in the sidecar; header edits Envoy would drop are warnings; unreadable paths and bad flags.
import test from "ava";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { meshext } from "./run-cli.js";

function files(t: { teardown(fn: () => void): void }, contents: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "meshext-lint-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(contents)) writeFileSync(join(dir, name), text);
  return dir;
}

const BAD = `type: MeshTrafficPermission
mesh: default
name: ok-one
spec:
  targetRef: {kind: Mesh}
  from: [{targetRef: {kind: Mesh}, default: {action: Allow}}]
---
type: MeshTrafficPermission
mesh: default
name: bad-one
spec:
  targetRef: {kind: Mesh}
  from: [{targetRef: {kind: Mesh}, default: {action: Maybe}}, {targetRef: {kind: Nope}, default: {action: Deny}}]
`;

const DROPPED_EDIT = `type: MeshHTTPRoute
mesh: default
name: bad-edit
spec:
  targetRef: {kind: Dataplane, name: backend-1}
  to:
    - targetRef: {kind: MeshService, name: payments}
      rules:
        - matches: [{path: {type: PathPrefix, value: /}}]
          default:
            filters:
              - type: RequestHeaderModifier
                requestHeaderModifier: {remove: [host]}
`;

test("lint › the sample policies directory is clean: exit 0, deprecations as warnings", async (t) => {
  const r = await meshext(["policy", "lint", "envoy/policies"]);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /^warning: envoy\/policies\/traffic-permission\.yaml \(MeshTrafficPermission backend-allow-web\): spec\.from: deprecated: /m);
  t.regex(r.stdout, /^6 file\(s\), 5 valid policies, 0 violation\(s\), \d+ warning\(s\)$/m);
});

test("lint › every violation with file, document index, kind and name, field path and message: exit 1", async (t) => {
  // Given a file whose second document has two violations
  const dir = files(t, { "bad.yaml": BAD });
  // When it is linted
  const r = await meshext(["policy", "lint", dir]);
  // Then both are listed, and the good document counts as valid
  t.is(r.code, 1);
  t.regex(r.stdout, new RegExp(`^error: ${join(dir, "bad.yaml")}: document 1 \\(MeshTrafficPermission bad-one\\): spec\\.from\\[0\\]\\.default\\.action: must be one of Allow, Deny, AllowWithShadowDeny$`, "m"));
  t.regex(r.stdout, /document 1 \(MeshTrafficPermission bad-one\): spec\.from\[1\]\.targetRef\.kind: must be one of /);
  t.regex(r.stdout, /1 file\(s\), 1 valid policy, 2 violation\(s\)/);
  // And as JSON for CI
  const json = await meshext(["policy", "lint", "--output", "json", join(dir, "bad.yaml")]);
  t.is(json.code, 1);
  const report = JSON.parse(json.stdout);
  t.is(report.errors.length, 2);
  t.like(report.errors[0], { file: join(dir, "bad.yaml"), index: 1, kind: "MeshTrafficPermission", name: "bad-one", field: "spec.from[0].default.action" });
});

test("lint › --kuma-version picks the validators, as in the sidecar: 2.14 rules are invalid for 2.5", async (t) => {
  const dir = files(t, { "rules.yaml": "type: MeshTrafficPermission\nmesh: default\nname: r\nspec:\n  targetRef: {kind: Mesh}\n  rules:\n    - default:\n        allow: [{spiffeID: {type: Prefix, value: spiffe://default/ns/shop}}]\n" });
  const current = await meshext(["policy", "lint", dir]);
  t.is(current.code, 0, current.stdout);
  const old = await meshext(["policy", "lint", "--kuma-version", "2.5", dir]);
  t.is(old.code, 1);
  t.regex(old.stdout, /document 0 \(MeshTrafficPermission r\): spec\.rules: /);
});

test("lint › a MeshHTTPRoute edit Envoy would drop is a warning naming the rule", async (t) => {
  const dir = files(t, { "route.yaml": DROPPED_EDIT });
  const r = await meshext(["policy", "lint", dir]);
  t.is(r.code, 0);
  t.regex(r.stdout, /^warning: .*route\.yaml \(MeshHTTPRoute bad-edit\): spec\.to\[0\]\.rules\[0\]: Envoy drops this request header edit \(ext_proc mutation_rules\): remove host \(never-removable\)$/m);
});

test("lint › bad input: an unreadable path is a violation; no path, an unknown flag or version is a usage error", async (t) => {
  const missing = await meshext(["policy", "lint", "/nonexistent/policies.yaml"]);
  t.is(missing.code, 1);
  t.regex(missing.stdout, /^error: \/nonexistent\/policies\.yaml: file: cannot read: ENOENT/m);
  for (const [args, message] of [
    [[], /no PATH given/],
    [["--nope", "x"], /unknown flag --nope/],
    [["--kuma-version", "9.9", "x"], /--kuma-version: Kuma 9\.9 is not supported/],
    [["-o", "xml", "x"], /--output: must be one of table, json, yaml/],
  ] as const) {
    const r = await meshext(["policy", "lint", ...args]);
    t.is(r.code, 2, args.join(" "));
    t.regex(r.stderr, message);
  }
});
