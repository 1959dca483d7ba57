// Decides what injection changes in one workload: patched, validated containers and the edits
// (paths + values) that put them in place. Pure; an error means no edit at all.
import { isDeepStrictEqual } from "node:util";
import type { ContainerPatch, PatchField } from "./container-patch.js";
import type { InjectFailure } from "./failure.js";
import { applyContainerPatches } from "./patch.js";
import { type Container, ENVOY_CONTAINER, INIT_CONTAINER, INJECTED_ANNOTATION, type RenderedSidecar, SIDECAR_CONTAINER, type SidecarChoice } from "./render.js";
import { splitNames } from "./settings.js";
import { validateContainer } from "./validate-container.js";
import { CONTAINER_PATCHES_ANNOTATION, type Path, type Workload } from "./workload.js";

/**
 * `set` replaces or creates the value at path; `append` adds to the list at path (creating it);
 * `insert` puts value at index of the list at path (creating it); `remove` drops the list's item at index.
 */
export type Edit =
  | { op: "set"; path: Path; value: unknown }
  | { op: "append"; path: Path; value: unknown }
  | { op: "insert"; path: Path; index: number; value: unknown }
  | { op: "remove"; path: Path; index: number };

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

/** Per-workload annotation choosing the sidecar mode; it wins over --native-sidecars. */
export const NATIVE_SIDECARS_ANNOTATION = "meshext.io/native-sidecars";

/** The mode the annotation asks for, the flag's default without it; undefined for a bad value. */
export function modeFor(w: Workload, choice: SidecarChoice): RenderedSidecar | undefined {
  const v = w.annotations[NATIVE_SIDECARS_ANNOTATION];
  if (v === undefined || v === null) return choice.nativeByDefault ? choice.native : choice.classic;
  if (v === "true") return choice.native;
  if (v === "false") return choice.classic;
  return undefined;
}

function namesOf(list: unknown): unknown[] {
  return Array.isArray(list) ? list.map((x) => (x as { name?: unknown } | null)?.name) : [];
}

/**
 * Puts each item in the list: replaced in place when one of that name exists (unless already equal:
 * re-injection edits nothing), else inserted where `insertAt` says (given the names so far).
 */
function placeByName(edits: Edit[], listPath: Path, list: unknown, items: readonly { name: string }[], insertAt: (names: unknown[]) => number): void {
  const names = namesOf(list);
  const original = new Map(namesOf(list).map((n, i) => [n, (list as unknown[])[i]]));
  for (const item of items) {
    const index = names.indexOf(item.name);
    if (index >= 0) {
      if (!isDeepStrictEqual(original.get(item.name), item)) edits.push({ op: "set", path: [...listPath, index], value: item });
      continue;
    }
    const at = insertAt(names);
    edits.push({ op: "insert", path: listPath, index: at, value: item });
    names.splice(at, 0, item.name);
  }
}

/** Removes items of these names (a switch of mode moves the sidecars between lists). */
function removeByName(edits: Edit[], listPath: Path, list: unknown, names: readonly string[]): void {
  const present = namesOf(list);
  for (let i = present.length - 1; i >= 0; i--) if (names.includes(present[i] as string)) edits.push({ op: "remove", path: listPath, index: i });
}

/** Index just after the last of `ours` in names, else `fallback`. */
function after(ours: readonly string[], fallback: (names: unknown[]) => number): (names: unknown[]) => number {
  return (names) => {
    const last = Math.max(...ours.map((n) => names.indexOf(n)));
    return last >= 0 ? last + 1 : fallback(names);
  };
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
  const containersPath = [...w.podSpecPath, "containers"];
  const initsPath = [...w.podSpecPath, "initContainers"];
  const sidecars = [ENVOY_CONTAINER, SIDECAR_CONTAINER];
  if (rendered.mode === "native") {
    // Kuma's order: the traffic-redirect init first, then the sidecars (Envoy, then meshext, whose
    // startupProbe waits for both), then the workload's own init containers, which run meshed.
    removeByName(edits, containersPath, spec.containers, sidecars);
    placeByName(edits, initsPath, spec.initContainers, [init, envoy, sidecar], after([INIT_CONTAINER, ENVOY_CONTAINER], () => 0));
  } else {
    // Sidecars first among the containers: kubelet starts containers in order and runs the meshext
    // sidecar's postStart (wait-ready) before starting the app.
    removeByName(edits, initsPath, spec.initContainers, sidecars);
    placeByName(edits, containersPath, spec.containers, [envoy, sidecar], after([ENVOY_CONTAINER], () => 0));
    placeByName(edits, initsPath, spec.initContainers, [init], (names) => names.length);
  }
  placeByName(edits, [...w.podSpecPath, "volumes"], spec.volumes, [rendered.volume as { name: string }], (names) => names.length);
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
