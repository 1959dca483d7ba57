// Finds the pod template of each workload kind, and the workloads inside a document (a single
// object or a `kind: List`). Pure: reads plain objects, returns paths into them.
import { isObject } from "./json.js";

export type Path = (string | number)[];

/** Where the pod spec lives, per kind. The pod metadata is its sibling "metadata". */
export const POD_SPEC_PATHS: Readonly<Record<string, readonly string[]>> = {
  Pod: ["spec"],
  Deployment: ["spec", "template", "spec"],
  StatefulSet: ["spec", "template", "spec"],
  DaemonSet: ["spec", "template", "spec"],
  ReplicaSet: ["spec", "template", "spec"],
  Job: ["spec", "template", "spec"],
  CronJob: ["spec", "jobTemplate", "spec", "template", "spec"],
};

export const CONTAINER_PATCHES_ANNOTATION = "kuma.io/container-patches";

export interface Workload {
  /** e.g. `Deployment shop/web`. */
  id: string;
  podSpecPath: Path;
  podMetaPath: Path;
  podSpec: Record<string, unknown>;
  /** Pod template annotations over the workload's own (the template wins). */
  annotations: Record<string, unknown>;
  /** The pod template's own annotations (where injection writes). */
  podAnnotations: Record<string, unknown>;
  /** The pod template's labels (for a Pod, its own). */
  podLabels: Record<string, unknown>;
  /** The workload's own metadata.name and metadata.namespace ("" when absent); generateName for Pods made by a controller. */
  name: string;
  namespace: string;
  generateName: string;
}

export type FoundWorkload = { ok: true; workload: Workload } | { ok: false; id: string; message: string };


export function getAt(root: unknown, path: readonly (string | number)[]): unknown {
  let at: unknown = root;
  for (const key of path) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<string | number, unknown>)[key];
  }
  return at;
}

function describe(obj: Record<string, unknown>): string {
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  const name = typeof meta.name === "string" ? meta.name : "<unnamed>";
  return `${String(obj.kind)} ${typeof meta.namespace === "string" ? `${meta.namespace}/` : ""}${name}`;
}

function annotationsAt(obj: unknown, path: Path, field = "annotations"): Record<string, unknown> {
  const a = getAt(obj, [...path, field]);
  return isObject(a) ? a : {};
}

function stringAt(obj: unknown, path: Path): string {
  const v = getAt(obj, path);
  return typeof v === "string" ? v : "";
}

function toWorkload(obj: Record<string, unknown>, base: Path): FoundWorkload | undefined {
  const specPath = POD_SPEC_PATHS[obj.kind as string];
  if (typeof obj.kind !== "string" || !specPath) return undefined;
  const id = describe(obj);
  const podSpec = getAt(obj, specPath);
  if (!isObject(podSpec)) return { ok: false, id, message: `${specPath.join(".")} must be an object` };
  if (!Array.isArray(podSpec.containers)) return { ok: false, id, message: `${specPath.join(".")}.containers must be a list` };
  for (const list of ["initContainers", "volumes"]) {
    if (podSpec[list] !== undefined && podSpec[list] !== null && !Array.isArray(podSpec[list])) {
      return { ok: false, id, message: `${specPath.join(".")}.${list} must be a list` };
    }
  }
  const metaPath = [...specPath.slice(0, -1), "metadata"];
  // Annotations are written under both metadata objects: anything but a mapping (or absent) cannot hold them.
  for (const path of [["metadata"], metaPath]) {
    const meta = getAt(obj, path);
    if (meta !== undefined && meta !== null && !isObject(meta)) return { ok: false, id, message: `${path.join(".")} must be an object` };
  }
  return {
    ok: true,
    workload: {
      id,
      podSpecPath: [...base, ...specPath],
      podMetaPath: [...base, ...metaPath],
      podSpec,
      annotations: { ...annotationsAt(obj, ["metadata"]), ...annotationsAt(obj, metaPath) },
      podAnnotations: annotationsAt(obj, metaPath),
      podLabels: annotationsAt(obj, metaPath, "labels"),
      name: stringAt(obj, ["metadata", "name"]),
      namespace: stringAt(obj, ["metadata", "namespace"]),
      generateName: stringAt(obj, ["metadata", "generateName"]),
    },
  };
}

/** The workloads in one parsed document: itself, or the items of a `kind: List`. */
export function findWorkloads(doc: unknown): FoundWorkload[] {
  if (!isObject(doc)) return [];
  if (doc.kind === "List" && Array.isArray(doc.items)) {
    return doc.items.flatMap((item, i) => (isObject(item) ? (toWorkload(item, ["items", i]) ?? []) : []));
  }
  const found = toWorkload(doc, []);
  return found ? [found] : [];
}
