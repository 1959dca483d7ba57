// Decides what injection changes in one workload: patched, validated containers and the edits
// (paths + values) that put them in place. Pure; an error means no edit at all.
import { isDeepStrictEqual } from "node:util";
import type { ContainerPatch, PatchField } from "./container-patch.js";
import type { InjectFailure } from "./failure.js";
import { applyContainerPatches } from "./patch.js";
import { type Container, INIT_CONTAINER, INJECTED_ANNOTATION, INJECTED_LABEL, LEGACY_CONTAINERS, LEGACY_VOLUMES, type RenderedSidecar, SIDECAR_ADMIN_PORT, SIDECAR_CONTAINER, type SidecarChoice, type SidecarMode } from "./render.js";
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
export function modeFor(w: Workload, choice: SidecarChoice): SidecarMode | undefined {
  const v = w.annotations[NATIVE_SIDECARS_ANNOTATION];
  if (v === undefined || v === null) return choice.nativeByDefault ? "native" : "classic";
  if (v === "true") return "native";
  if (v === "false") return "classic";
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

/** Pod-template annotations Prometheus reads (the common kubernetes-pods scrape job's convention). */
export const PROMETHEUS_ANNOTATIONS = { scrape: "prometheus.io/scrape", port: "prometheus.io/port", path: "prometheus.io/path" } as const;
/** Set when injection wrote the prometheus.io/* annotations itself (they announce Envoy's stats listener). */
export const PROMETHEUS_OWNER_ANNOTATION = "meshext.io/prometheus";
export const STATS_PORT_ANNOTATION = "meshext.io/stats-port";
export const METRICS_PORT_ANNOTATION = "meshext.io/metrics-port";
export const ENVOY_STATS_PATH = "/stats/prometheus";

/** What the pod-template metadata gains: the injected marker, the scrape announcements. */
function metadataEdits(w: Workload, statsPort: number): Edit[] {
  const want: [string, string][] = [
    [INJECTED_ANNOTATION, "true"],
    [STATS_PORT_ANNOTATION, String(statsPort)],
    [METRICS_PORT_ANNOTATION, String(SIDECAR_ADMIN_PORT)],
  ];
  // The app's own prometheus.io/* annotations win (they announce its metrics); the Kubernetes scrape job
  // shipped in envoy/kubernetes/prometheus.yml reaches Envoy and the sidecar through meshext.io/* then.
  const appOwned = w.podAnnotations[PROMETHEUS_ANNOTATIONS.scrape] !== undefined && w.podAnnotations[PROMETHEUS_OWNER_ANNOTATION] !== "envoy";
  if (!appOwned) {
    want.push([PROMETHEUS_ANNOTATIONS.scrape, "true"], [PROMETHEUS_ANNOTATIONS.port, String(statsPort)], [PROMETHEUS_ANNOTATIONS.path, ENVOY_STATS_PATH], [PROMETHEUS_OWNER_ANNOTATION, "envoy"]);
  }
  const edits: Edit[] = [];
  for (const [k, v] of want) if (w.podAnnotations[k] !== v) edits.push({ op: "set", path: [...w.podMetaPath, "annotations", k], value: v });
  if (w.podLabels[INJECTED_LABEL] !== "true") edits.push({ op: "set", path: [...w.podMetaPath, "labels", INJECTED_LABEL], value: "true" });
  return edits;
}

/** The edits for one workload: probe rewrites first (they address the app's containers by their current index), then ours. */
export function planInjection(w: Workload, rendered: RenderedSidecar, patches: readonly ContainerPatch[], probeEdits: readonly Edit[], statsPort: number): Plan {
  const targets: [PatchField[], Container][] = [
    [["sidecarPatch", "meshextSidecarPatch"], rendered.sidecar],
    [["initPatch"], rendered.init],
  ];
  const patched: Container[] = [];
  for (const [fields, container] of targets) {
    let current = container;
    for (const field of fields) {
      const result = applyContainerPatches(current, patches, field);
      if (!result.ok) {
        const { patch, operationAt, operation, reason } = result.failure;
        return { ok: false, failure: { code: "patch_failed", workload: w.id, patch, operation: `${operationAt} ${JSON.stringify(operation)}`, message: reason } };
      }
      current = result.container;
    }
    const violations = validateContainer(current, container.name);
    if (violations.length > 0) {
      const names = patches.filter((p) => fields.some((f) => p[f].length > 0)).map((p) => p.name);
      return {
        ok: false,
        failure: {
          code: "container_invalid",
          workload: w.id,
          patch: names.join(","),
          operation: fields.join("+"),
          message: `patched container "${container.name}" is invalid: ${violations.map((v) => `${v.field}: ${v.message}`).join("; ")}`,
        },
      };
    }
    patched.push(current);
  }
  const [sidecar, init] = patched as [Container, Container];
  const spec = w.podSpec;
  const edits: Edit[] = [...probeEdits];
  const containersPath = [...w.podSpecPath, "containers"];
  const initsPath = [...w.podSpecPath, "initContainers"];
  const volumesPath = [...w.podSpecPath, "volumes"];
  // Containers and the volume of earlier releases (a separate Envoy, its ConfigMap) go.
  removeByName(edits, containersPath, spec.containers, LEGACY_CONTAINERS);
  removeByName(edits, initsPath, spec.initContainers, LEGACY_CONTAINERS);
  removeByName(edits, volumesPath, spec.volumes, LEGACY_VOLUMES);
  const lists = { containers: withoutNames(spec.containers, LEGACY_CONTAINERS), inits: withoutNames(spec.initContainers, LEGACY_CONTAINERS) };
  if (rendered.mode === "native") {
    // Kuma's order: the traffic-redirect init first, then the sidecar (whose startupProbe waits for
    // it and Envoy), then the workload's own init containers, which run meshed.
    removeByName(edits, containersPath, lists.containers, [SIDECAR_CONTAINER]);
    placeByName(edits, initsPath, lists.inits, [init, sidecar], after([INIT_CONTAINER], () => 0));
  } else {
    // The sidecar first among the containers: kubelet starts containers in order and runs its
    // postStart (wait-ready) before starting the app.
    removeByName(edits, initsPath, lists.inits, [SIDECAR_CONTAINER]);
    placeByName(edits, containersPath, lists.containers, [sidecar], () => 0);
    placeByName(edits, initsPath, lists.inits, [init], (names) => names.length);
  }
  placeByName(edits, volumesPath, withoutNames(spec.volumes, LEGACY_VOLUMES), [rendered.volume as { name: string }], (names) => names.length);
  // Only raised: a longer grace period chosen by the user is kept.
  const grace = spec.terminationGracePeriodSeconds;
  if (!(typeof grace === "number" && grace >= rendered.terminationGracePeriodSeconds)) {
    edits.push({ op: "set", path: [...w.podSpecPath, "terminationGracePeriodSeconds"], value: rendered.terminationGracePeriodSeconds });
  }
  edits.push(...metadataEdits(w, statsPort));
  return { ok: true, edits };
}

/** The list as it is once the legacy items are removed (what later index-based edits see). */
function withoutNames(list: unknown, names: readonly string[]): unknown {
  return Array.isArray(list) ? list.filter((x) => !names.includes((x as { name?: unknown } | null)?.name as string)) : list;
}
