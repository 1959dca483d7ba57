// Every way a patch can fail refuses the whole injection with one error naming workload, patch, operation.
import test from "ava";
import { formatFailure } from "../../extproc/inject/failure.js";
import { fixture, patchResource, podYaml, run, sourceOf } from "./helpers.js";

async function refused(t: { fail(m: string): void }, text: string, ...rest: Parameters<typeof run> extends [string, ...infer R] ? R : never) {
  const outcome = await run(text, ...rest);
  if (outcome.ok) {
    t.fail("expected the injection to be refused");
    throw new Error("unreachable");
  }
  return { ...outcome.failure, line: formatFailure(outcome.failure) };
}

test("inject › a referenced patch that does not exist refuses injection", async (t) => {
  const f = await refused(t, podYaml("privileged,no-such-patch"));
  t.is(f.code, "patch_not_found");
  t.is(f.workload, "Pod demo/app");
  t.is(f.patch, "no-such-patch");
  t.regex(f.line, /not injecting Pod demo\/app: ContainerPatch "no-such-patch": does not exist/);
});

test("inject › a failing test operation refuses injection and names the operation", async (t) => {
  const f = await refused(t, podYaml("escalate,must-not-escalate"));
  t.is(f.code, "patch_failed");
  t.is(f.patch, "must-not-escalate");
  t.is(f.operation, 'sidecarPatch[0] {"op":"test","path":"/securityContext/allowPrivilegeEscalation","value":false}');
  t.regex(f.line, /test operation failed/);
});

test("inject › the same patches in the other order apply", async (t) => {
  t.true((await run(podYaml("must-not-escalate,escalate"))).ok);
});

test("inject › a path missing from the container refuses injection", async (t) => {
  const f = await refused(t, podYaml("remove-missing"));
  t.is(f.code, "patch_failed");
  t.is(f.operation?.split(" ")[0], "initPatch[1]");
  t.regex(f.message, /does not exist/);
});

test("inject › a patch producing an invalid container refuses injection", async (t) => {
  const f = await refused(t, podYaml("empty-image"));
  t.is(f.code, "container_invalid");
  t.is(f.patch, "empty-image");
  t.is(f.operation, "sidecarPatch+meshextSidecarPatch");
  t.regex(f.message, /"meshext-sidecar" is invalid: image: must be a non-empty image reference/);
});

test("inject › renaming an injected container is refused (it would break re-injection)", async (t) => {
  const source = sourceOf(patchResource("rename", { initPatch: [{ op: "replace", path: "/name", value: "my-init" }] }));
  const f = await refused(t, podYaml("rename"), source);
  t.is(f.code, "container_invalid");
  t.regex(f.message, /name: must stay "meshext-init"/);
});

test("inject › a typo in a field name is refused, not silently added", async (t) => {
  const source = sourceOf(patchResource("typo", { sidecarPatch: [{ op: "add", path: "/securityContxt", value: { privileged: true } }] }));
  const f = await refused(t, podYaml("typo"), source);
  t.regex(f.message, /securityContxt: unknown container field/);
});

test("inject › a referenced patch that is itself invalid refuses injection with its violations", async (t) => {
  const f = await refused(t, podYaml("broken-json"));
  t.is(f.code, "patch_invalid");
  t.is(f.patch, "broken-json");
  t.regex(f.message, /spec\.sidecarPatch\[0\]\.value: is not valid JSON/);
});

test("inject › one refused workload in a multi-document input means no output at all", async (t) => {
  const input = podYaml() + "---\n" + podYaml("no-such-patch").replace("name: app", "name: other");
  const f = await refused(t, input);
  t.is(f.workload, "Pod demo/other");
});

test("inject › a workload without a containers list is refused", async (t) => {
  const f = await refused(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec: {}\n", sourceOf());
  t.is(f.code, "workload_invalid");
  t.regex(f.line, /Deployment d: spec\.template\.spec\.containers must be a list/);
});

test("inject › unreadable input is refused", async (t) => {
  const f = await refused(t, "kind: Pod\nmetadata: {name: [\n", sourceOf());
  t.is(f.code, "input_invalid");
});

test("inject › the default patches apply when the annotation is absent", async (t) => {
  const outcome = await run(podYaml(), undefined, ["--default-patches=privileged"]);
  t.true(outcome.ok && outcome.output.includes("privileged: true"));
  const missing = await refused(t, podYaml(), undefined, ["--default-patches=privileged,gone"]);
  t.is(missing.patch, "gone");
});

test("inject › the annotation replaces the default list; an empty annotation means no patches", async (t) => {
  const annotated = await run(podYaml("memory-2gi"), undefined, ["--default-patches=no-such-patch"]);
  t.true(annotated.ok && annotated.output.includes("memory: 2Gi"));
  const empty = await run(podYaml(""), undefined, ["--default-patches=no-such-patch"]);
  t.true(empty.ok && !empty.output.includes("privileged"));
});

test("inject › a Job's own annotation is read when its pod template has none", async (t) => {
  const input = fixture("job.yaml").replace("  name: migrate\n", "  name: migrate\n  annotations:\n    kuma.io/container-patches: nope\n");
  const f = await refused(t, input);
  t.is(f.patch, "nope");
});

test("inject › a container-patches annotation that is not a string is refused, not defaulted", async (t) => {
  const input = podYaml().replace("  namespace: demo\n", "  namespace: demo\n  annotations:\n    kuma.io/container-patches: [privileged]\n");
  const f = await refused(t, input, undefined, ["--default-patches=memory-1gi"]);
  t.is(f.code, "workload_invalid");
  t.regex(f.message, /must be a string/);
});
