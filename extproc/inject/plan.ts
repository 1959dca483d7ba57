// Decides what injection changes in one workload: patched, validated containers and the edits
// (paths + values) that put them in place. Pure; an error means no edit at all.
import { isDeepStrictEqual } from "node:util";
import type { ContainerPatch, PatchField } from "./container-patch.js";
import type { InjectFailure } from "./failure.js";
import { applyContainerPatches } from "./patch.js";
import { type Container, INJECTED_ANNOTATION, type RenderedSidecar } from "./render.js";
import { splitNames } from "./settings.js";
import { validateContainer } from "./validate-container.js";
import { CONTAINER_PATCHES_ANNOTATION, type Path, type Workload } from "./workload.js";

/** `set` replaces or creates the value at path; `append` adds to the list at path (creating it). */
export type Edit = { op: "set"; path: Path; value: unknown } | { op: "append"; path: Path; value: unknown };

export type Plan = { ok: true; edits: Edit[] } | { ok: false; failure: InjectFailure };

/**
 * The annotation's names in order; absent annotation → the defaults; empty annotation → none.
 * undefined when the annotation is not a string (Kubernetes would reject it; we do not guess).
 */
export function patchNamesFor(w: Workload, defaults: readonly string[]): string[] | undefined {
  const listed = w.annotations[CONTAINER_PATCHES_ANNOTATION];
  if (listed === undefined || listed === null) return [...defaults];
  return typeof listed === "string" ? splitNames(listed) : undefined;
}

/** Replaces the item of the same name (unless already equal: re-injection edits nothing) or appends it. */
function upsertByName(edits: Edit[], listPath: Path, list: unknown, item: { name: string }): void {
  const index = Array.isArray(list) ? list.findIndex((x) => (x as { name?: unknown } | null)?.name === item.name) : -1;
  if (index >= 0 && isDeepStrictEqual((list as unknown[])[index], item)) return;
  if (index >= 0) edits.push({ op: "set", path: [...listPath, index], value: item });
  else edits.push({ op: "append", path: listPath, value: item });
}

export function planInjection(w: Workload, rendered: RenderedSidecar, patches: readonly ContainerPatch[]): Plan {
  const targets: [PatchField, Container][] = [
    ["sidecarPatch", rendered.envoy],
    ["meshextSidecarPatch", rendered.sidecar],
    ["initPatch", rendered.init],
  ];
  const patched: Container[] = [];
  for (const [field, container] of targets) {
    const result = applyContainerPatches(container, patches, field);
    if (!result.ok) {
      const { patch, operationAt, operation, reason } = result.failure;
      return { ok: false, failure: { code: "patch_failed", workload: w.id, patch, operation: `${operationAt} ${JSON.stringify(operation)}`, message: reason } };
    }
    const violations = validateContainer(result.container, container.name);
    if (violations.length > 0) {
      const names = patches.filter((p) => p[field].length > 0).map((p) => p.name);
      return {
        ok: false,
        failure: {
          code: "container_invalid",
          workload: w.id,
          patch: names.join(","),
          operation: field,
          message: `patched container "${container.name}" is invalid: ${violations.map((v) => `${v.field}: ${v.message}`).join("; ")}`,
        },
      };
    }
    patched.push(result.container);
  }
  const [envoy, sidecar, init] = patched as [Container, Container, Container];
  const spec = w.podSpec;
  const edits: Edit[] = [];
  upsertByName(edits, [...w.podSpecPath, "containers"], spec.containers, envoy);
  upsertByName(edits, [...w.podSpecPath, "containers"], spec.containers, sidecar);
  upsertByName(edits, [...w.podSpecPath, "initContainers"], spec.initContainers, init);
  upsertByName(edits, [...w.podSpecPath, "volumes"], spec.volumes, rendered.volume as { name: string });
  // Only raised: a longer grace period chosen by the user is kept.
  const grace = spec.terminationGracePeriodSeconds;
  if (!(typeof grace === "number" && grace >= rendered.terminationGracePeriodSeconds)) {
    edits.push({ op: "set", path: [...w.podSpecPath, "terminationGracePeriodSeconds"], value: rendered.terminationGracePeriodSeconds });
  }
  if (w.podAnnotations[INJECTED_ANNOTATION] !== "true") {
    edits.push({ op: "set", path: [...w.podMetaPath, "annotations", INJECTED_ANNOTATION], value: "true" });
  }
  return { ok: true, edits };
}
