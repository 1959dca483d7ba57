// applyContainerPatches: every RFC 6902 operation on the rendered containers, order, all-or-nothing.
import test from "ava";
import { type ContainerPatch, parseContainerPatch } from "../../extproc/inject/container-patch.js";
import { applyContainerPatches } from "../../extproc/inject/patch.js";
import { renderSidecar } from "../../extproc/inject/render.js";
import { patchResource, settings } from "./helpers.js";

const rendered = renderSidecar(settings());

function patch(name: string, spec: Record<string, unknown>): ContainerPatch {
  const parsed = parseContainerPatch(patchResource(name, spec));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.violations));
  return parsed.patch;
}

test("inject › add sets a securityContext field on the sidecar (Kuma JSON-string value)", (t) => {
  const p = patch("priv", { sidecarPatch: [{ op: "add", path: "/securityContext/privileged", value: "true" }] });
  const result = applyContainerPatches(rendered.sidecar, [p], "sidecarPatch");
  t.true(result.ok);
  if (result.ok) t.is(result.container.securityContext && (result.container.securityContext as any).privileged, true);
});

test("inject › add a whole object to the init container from a JSON string", (t) => {
  const p = patch("seccomp", { initPatch: [{ op: "add", path: "/securityContext/seccompProfile", value: '{"type": "RuntimeDefault"}' }] });
  const result = applyContainerPatches(rendered.init, [p], "initPatch");
  t.deepEqual(result.ok && (result.container.securityContext as any).seccompProfile, { type: "RuntimeDefault" });
});

test("inject › remove, replace, move, copy and test all apply to the container object", (t) => {
  const p = patch("all-ops", {
    initPatch: [
      { op: "test", path: "/securityContext/runAsUser", value: "0" },
      { op: "remove", path: "/securityContext/capabilities/drop" },
      { op: "replace", path: "/resources/limits/cpu", value: "200m" },
      { op: "copy", from: "/resources/limits", path: "/resources/requests" },
      { op: "move", from: "/securityContext/runAsGroup", path: "/securityContext/fsGroupHint" },
    ],
  });
  const result = applyContainerPatches(rendered.init, [p], "initPatch");
  if (!result.ok) return t.fail(JSON.stringify(result.failure));
  const sc = result.container.securityContext as any;
  t.is(sc.capabilities.drop, undefined);
  t.deepEqual((result.container.resources as any).requests, { cpu: "200m", memory: "50Mi" });
  t.is(sc.runAsGroup, undefined);
  t.is(sc.fsGroupHint, 0);
});

test("inject › patches apply in the order given, the last write wins", (t) => {
  const a = patch("a", { sidecarPatch: [{ op: "replace", path: "/resources/limits/memory", value: "1Gi" }] });
  const b = patch("b", { sidecarPatch: [{ op: "replace", path: "/resources/limits/memory", value: "2Gi" }] });
  const ab = applyContainerPatches(rendered.sidecar, [a, b], "sidecarPatch");
  const ba = applyContainerPatches(rendered.sidecar, [b, a], "sidecarPatch");
  t.is(ab.ok && (ab.container.resources as any).limits.memory, "2Gi");
  t.is(ba.ok && (ba.container.resources as any).limits.memory, "1Gi");
});

test("inject › a failing operation names the patch and the operation, and the input stays untouched", (t) => {
  const before = structuredClone(rendered.sidecar);
  const p = patch("strict", {
    sidecarPatch: [
      { op: "add", path: "/securityContext/privileged", value: true },
      { op: "test", path: "/securityContext/runAsUser", value: 0 },
    ],
  });
  const result = applyContainerPatches(rendered.sidecar, [p], "sidecarPatch");
  t.false(result.ok);
  if (!result.ok) {
    t.is(result.failure.patch, "strict");
    t.is(result.failure.operationAt, "sidecarPatch[1]");
    t.is(result.failure.operation.op, "test");
    t.regex(result.failure.reason, /test operation failed/);
  }
  t.deepEqual(rendered.sidecar, before);
});

test("inject › a missing path fails remove and replace, and add under a missing parent", (t) => {
  for (const op of [
    { op: "remove", path: "/securityContext/seLinuxOptions" },
    { op: "replace", path: "/workingDir", value: "/x" },
    { op: "add", path: "/livenessProbe/httpGet", value: "{}" },
  ]) {
    const result = applyContainerPatches(rendered.sidecar, [patch("p", { meshextSidecarPatch: [op] })], "meshextSidecarPatch");
    t.false(result.ok, JSON.stringify(op));
    if (!result.ok) t.regex(result.failure.reason, /does not exist/);
  }
});

test("inject › applying a patch twice does not let one use alter the patch for the next", (t) => {
  const p = patch("nested", {
    sidecarPatch: [
      { op: "add", path: "/securityContext/seLinuxOptions", value: { level: "s0" } },
      { op: "add", path: "/securityContext/seLinuxOptions/type", value: "spc_t" },
    ],
  });
  applyContainerPatches(rendered.sidecar, [p], "sidecarPatch");
  t.deepEqual(p.sidecarPatch[0], { op: "add", path: "/securityContext/seLinuxOptions", value: { level: "s0" } } as never);
});

test("inject › each patch list applies only its own operations", (t) => {
  const p = patch("env", { meshextSidecarPatch: [{ op: "add", path: "/env/-", value: { name: "X", value: "1" } }] });
  const viaSidecarPatch = applyContainerPatches(rendered.sidecar, [p], "sidecarPatch");
  const viaMeshextPatch = applyContainerPatches(rendered.sidecar, [p], "meshextSidecarPatch");
  const viaInitPatch = applyContainerPatches(rendered.init, [p], "initPatch");
  t.deepEqual(viaSidecarPatch.ok && viaSidecarPatch.container, rendered.sidecar);
  t.deepEqual(viaInitPatch.ok && viaInitPatch.container, rendered.init);
  t.deepEqual(viaMeshextPatch.ok && (viaMeshextPatch.container.env as unknown[]).at(-1), { name: "X", value: "1" });
});
