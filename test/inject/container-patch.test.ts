// parseContainerPatch and decodeValue: Kuma's form, the universal form, and their violations.
import test from "ava";
import { decodeValue, parseContainerPatch } from "../../extproc/inject/container-patch.js";

test("inject › Kuma JSON-string values and plain YAML values decode to the same thing", (t) => {
  const cases: [unknown, unknown][] = [
    ['{"privileged": true}', { privileged: true }],
    [{ privileged: true }, { privileged: true }],
    ["1337", 1337],
    [1337, 1337],
    ["true", true],
    ['"1337"', "1337"],
    ["1Gi", "1Gi"],
    ["RuntimeDefault", "RuntimeDefault"],
  ];
  for (const [raw, want] of cases) t.deepEqual(decodeValue(raw), { ok: true, value: want }, JSON.stringify(raw));
});

test("inject › a string that starts like JSON but does not parse is an error", (t) => {
  t.false(decodeValue('{"privileged": tru').ok);
  t.false(decodeValue("[1,").ok);
});

test("inject › the universal REST form (type, name, spec) is accepted", (t) => {
  const parsed = parseContainerPatch({ type: "ContainerPatch", name: "p", spec: { initPatch: [{ op: "remove", path: "/args" }] } });
  t.deepEqual(parsed, { ok: true, patch: { name: "p", sidecarPatch: [], meshextSidecarPatch: [], initPatch: [{ op: "remove", path: "/args" }] } });
});

test("inject › violations carry field paths, all of them at once", (t) => {
  const parsed = parseContainerPatch({
    kind: "ContainerPatch",
    metadata: {},
    spec: {
      sidecarPatch: [{ op: "merge", path: "/a" }, { op: "add", path: "no-slash", value: 1 }, { op: "copy", path: "/a" }, { op: "replace", path: "/a" }],
      initPatch: "not a list",
    },
  });
  t.false(parsed.ok);
  if (!parsed.ok) {
    t.deepEqual(
      parsed.violations.map((v) => v.field),
      ["metadata.name", "spec.sidecarPatch[0].op", "spec.sidecarPatch[1].path", "spec.sidecarPatch[2].from", "spec.sidecarPatch[3].value", "spec.initPatch"],
    );
  }
});

test("inject › another kind is not a ContainerPatch", (t) => {
  const parsed = parseContainerPatch({ kind: "MeshTrafficPermission", metadata: { name: "x" }, spec: {} });
  t.false(parsed.ok);
  if (!parsed.ok) t.is(parsed.violations[0]!.field, "kind");
});

test("inject › a misspelt patch list is refused, not silently ignored", (t) => {
  // given a patch whose author wrote sidecarPatches for sidecarPatch
  const parsed = parseContainerPatch({ type: "ContainerPatch", name: "p", spec: { sidecarPatches: [{ op: "add", path: "/securityContext", value: {} }] } });
  // then it is invalid, naming the field and the expected ones
  t.false(parsed.ok);
  if (!parsed.ok) t.deepEqual(parsed.violations, [{ field: "spec.sidecarPatches", message: "unknown field (expected sidecarPatch, meshextSidecarPatch, initPatch)" }]);
});
