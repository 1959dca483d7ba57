// The ContainerPatch resource (Kuma kuma.io/v1alpha1): parse and validate either the Kubernetes
// form (kind + metadata.name + spec) or the universal REST form (type + name + spec). Pure.
import type { Operation } from "fast-json-patch";
import type { Violation } from "./validate-container.js";
import { isObject } from "./json.js";

/**
 * Which injected container each list patches. sidecarPatch is the sidecar (meshext and Envoy in one
 * container, as Kuma's kuma-sidecar); meshextSidecarPatch, from when they were two containers, patches the
 * same container after sidecarPatch.
 */
export const PATCH_TARGETS = {
  sidecarPatch: "sidecar",
  meshextSidecarPatch: "sidecar",
  initPatch: "init",
} as const;
export type PatchField = keyof typeof PATCH_TARGETS;
export const PATCH_FIELDS = Object.keys(PATCH_TARGETS) as PatchField[];

export interface ContainerPatch {
  name: string;
  sidecarPatch: Operation[];
  meshextSidecarPatch: Operation[];
  initPatch: Operation[];
}

export type ParsedPatch = { ok: true; patch: ContainerPatch } | { ok: false; name: string | undefined; violations: Violation[] };

const OPS = ["add", "remove", "replace", "move", "copy", "test"];
const NEEDS_VALUE = ["add", "replace", "test"];
const NEEDS_FROM = ["move", "copy"];


/**
 * Kuma writes `value` as a JSON string ('{"privileged": true}', '1337'); plain YAML values are
 * accepted as they are. A string that starts like JSON ({ [ ") must parse; other strings are
 * tried as JSON scalars (1337, true, null) and otherwise kept as the string itself.
 */
export function decodeValue(raw: unknown): { ok: true; value: unknown } | { ok: false; message: string } {
  if (typeof raw !== "string") return { ok: true, value: raw };
  const text = raw.trim();
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    if (/^[{["]/.test(text)) return { ok: false, message: `is not valid JSON: ${(err as Error).message}` };
    return { ok: true, value: raw };
  }
}

function parseOperation(raw: unknown, field: string, v: Violation[]): Operation | undefined {
  if (!isObject(raw)) return void v.push({ field, message: "must be an object with op and path" });
  const before = v.length;
  const { op, path, from } = raw;
  if (typeof op !== "string" || !OPS.includes(op)) v.push({ field: `${field}.op`, message: `must be one of ${OPS.join(", ")}` });
  if (typeof path !== "string" || (path !== "" && !path.startsWith("/"))) {
    v.push({ field: `${field}.path`, message: 'must be a JSON Pointer such as "/securityContext/privileged"' });
  }
  if (NEEDS_FROM.includes(op as string) && (typeof from !== "string" || (from !== "" && !from.startsWith("/")))) {
    v.push({ field: `${field}.from`, message: `is required for ${String(op)} and must be a JSON Pointer` });
  }
  let value: unknown;
  if (NEEDS_VALUE.includes(op as string)) {
    if (raw.value === undefined) v.push({ field: `${field}.value`, message: `is required for ${String(op)}` });
    else {
      const decoded = decodeValue(raw.value);
      if (decoded.ok) value = decoded.value;
      else v.push({ field: `${field}.value`, message: decoded.message });
    }
  }
  if (v.length > before) return undefined;
  const operation: Record<string, unknown> = { op, path };
  if (NEEDS_FROM.includes(op as string)) operation.from = from;
  if (NEEDS_VALUE.includes(op as string)) operation.value = value;
  return operation as unknown as Operation;
}

export function parseContainerPatch(raw: unknown): ParsedPatch {
  const v: Violation[] = [];
  if (!isObject(raw)) return { ok: false, name: undefined, violations: [{ field: "", message: "must be an object" }] };
  const kind = raw.kind ?? raw.type;
  if (kind !== "ContainerPatch") v.push({ field: raw.kind !== undefined ? "kind" : "type", message: 'must be "ContainerPatch"' });
  const name = isObject(raw.metadata) ? raw.metadata.name : raw.name;
  if (typeof name !== "string" || name === "") v.push({ field: isObject(raw.metadata) ? "metadata.name" : "name", message: "must be a non-empty string" });
  const specField = isObject(raw.spec) ? "spec." : "";
  const spec = isObject(raw.spec) ? raw.spec : raw;
  const patch: ContainerPatch = { name: typeof name === "string" ? name : "", sidecarPatch: [], meshextSidecarPatch: [], initPatch: [] };
  if (isObject(raw.spec)) {
    // A misspelt list (sidecarPatches) would otherwise be ignored and the hardening silently not applied.
    for (const key of Object.keys(raw.spec)) {
      if (!(PATCH_FIELDS as readonly string[]).includes(key)) v.push({ field: `spec.${key}`, message: `unknown field (expected ${PATCH_FIELDS.join(", ")})` });
    }
  }
  for (const field of PATCH_FIELDS) {
    const list = spec[field];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) {
      v.push({ field: specField + field, message: "must be a list of JSON Patch operations" });
      continue;
    }
    list.forEach((op, i) => {
      const parsed = parseOperation(op, `${specField}${field}[${i}]`, v);
      if (parsed) patch[field].push(parsed);
    });
  }
  if (v.length > 0) return { ok: false, name: typeof name === "string" ? name : undefined, violations: v };
  return { ok: true, patch };
}
