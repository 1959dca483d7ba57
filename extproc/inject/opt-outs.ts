// Whether a workload is injected at all: the opt-out annotations and labels of meshext, Kuma and
// Istio and hostNetwork pods pass through untouched; a pod another mesh's proxy already runs in is
// refused (two transparent proxies in one pod fight over its traffic). Pure.
import type { Workload } from "./workload.js";

export type Admission = { action: "inject" } | { action: "skip"; reason: string } | { action: "refuse"; message: string };

export const INJECT_ANNOTATION = "meshext.io/inject";

/** Opt-outs we honour: key (annotation or pod label) → the values that mean "do not inject". */
const OPT_OUTS: readonly { key: string; off: readonly string[] }[] = [
  { key: INJECT_ANNOTATION, off: ["false", "disabled"] },
  // Kuma accepts enabled/disabled and true/false (kuma.io/sidecar-injection, annotation or label).
  { key: "kuma.io/sidecar-injection", off: ["disabled", "false"] },
  // Istio: the label (preferred since 1.x) or the older annotation.
  { key: "sidecar.istio.io/inject", off: ["false"] },
];

/** Containers (or init containers) that mean a mesh proxy is already in the pod. */
const FOREIGN_CONTAINERS: Readonly<Record<string, string>> = {
  "kuma-sidecar": "Kuma",
  "kuma-init": "Kuma",
  "kuma-validation": "Kuma",
  "istio-proxy": "Istio",
  "istio-init": "Istio",
  "istio-validation": "Istio",
  "linkerd-proxy": "Linkerd",
  "linkerd-init": "Linkerd",
  "linkerd-network-validator": "Linkerd",
};

/** Annotations another mesh's injector leaves: name → mesh (present with any value, or with the given one). */
const FOREIGN_ANNOTATIONS: readonly { key: string; value?: string; mesh: string }[] = [
  { key: "kuma.io/sidecar-injected", value: "true", mesh: "Kuma" },
  { key: "sidecar.istio.io/status", mesh: "Istio" },
  { key: "linkerd.io/proxy-version", mesh: "Linkerd" },
];

function names(list: unknown): string[] {
  return Array.isArray(list) ? list.flatMap((c) => (c && typeof c === "object" && typeof (c as { name?: unknown }).name === "string" ? [(c as { name: string }).name] : [])) : [];
}

export function admissionOf(w: Workload): Admission {
  const ours = w.annotations[INJECT_ANNOTATION] ?? w.podLabels[INJECT_ANNOTATION];
  if (ours !== undefined && ours !== null && !["true", "enabled", "false", "disabled"].includes(ours as string)) {
    return { action: "refuse", message: `${INJECT_ANNOTATION} must be "true", "enabled", "false" or "disabled", got ${JSON.stringify(ours)}` };
  }
  for (const { key, off } of OPT_OUTS) {
    for (const [where, map] of [["annotation", w.annotations], ["label", w.podLabels]] as const) {
      const v = map[key];
      if (typeof v === "string" && off.includes(v)) return { action: "skip", reason: `${where} ${key}: "${v}"` };
    }
  }
  if (w.podSpec.hostNetwork === true) return { action: "skip", reason: "hostNetwork: true (the pod shares the node's network; there is no pod traffic to redirect)" };
  for (const name of [...names(w.podSpec.initContainers), ...names(w.podSpec.containers)]) {
    const mesh = FOREIGN_CONTAINERS[name];
    if (mesh) return { action: "refuse", message: `the pod already runs ${/^[AEIOU]/.test(mesh) ? "an" : "a"} ${mesh} proxy (container "${name}"); remove that injection first or opt this workload out with ${INJECT_ANNOTATION}: "false"` };
  }
  for (const { key, value, mesh } of FOREIGN_ANNOTATIONS) {
    const v = w.annotations[key];
    if (v !== undefined && v !== null && (value === undefined || v === value)) {
      return { action: "refuse", message: `the pod is already injected by ${mesh} (annotation ${key}); remove that injection first or opt this workload out with ${INJECT_ANNOTATION}: "false"` };
    }
  }
  return { action: "inject" };
}
