// Applies ContainerPatches to one rendered container, in order, all-or-nothing, with fast-json-patch.
// Pure: the input container and the patches are never mutated.
import jsonpatch, { type JsonPatchError, type Operation } from "fast-json-patch";
import type { Container } from "./render.js";
import type { ContainerPatch, PatchField } from "./container-patch.js";

export interface PatchFailure {
  patch: string;
  /** e.g. "sidecarPatch[1]". */
  operationAt: string;
  operation: Operation;
  reason: string;
}

export type PatchResult = { ok: true; container: Container } | { ok: false; failure: PatchFailure };

const REASONS: Record<string, string> = {
  TEST_OPERATION_FAILED: "test operation failed: the value at path differs",
  OPERATION_PATH_UNRESOLVABLE: "path does not exist in the container",
  OPERATION_PATH_CANNOT_ADD: "cannot add at path: its parent does not exist",
  OPERATION_FROM_UNRESOLVABLE: "from path does not exist in the container",
  OPERATION_PATH_ILLEGAL_ARRAY_INDEX: "path has an invalid list index",
  OPERATION_VALUE_OUT_OF_BOUNDS: "list index is past the end of the list",
};

function reasonOf(err: unknown): string {
  const name = (err as JsonPatchError).name;
  return REASONS[name] ?? (err instanceof Error ? err.message : String(err));
}

/** Applies `field` of every patch to `container`, in the given order; the first failing operation stops everything. */
export function applyContainerPatches(container: Container, patches: readonly ContainerPatch[], field: PatchField): PatchResult {
  let doc: unknown = structuredClone(container);
  for (const patch of patches) {
    for (const [i, operation] of patch[field].entries()) {
      try {
        // Clone the operation: fast-json-patch inserts `value` by reference, and a later
        // operation could then modify the patch itself (and every other workload using it).
        doc = jsonpatch.applyOperation(doc, structuredClone(operation), true, true, true, i).newDocument;
      } catch (err) {
        return { ok: false, failure: { patch: patch.name, operationAt: `${field}[${i}]`, operation, reason: reasonOf(err) } };
      }
    }
  }
  return { ok: true, container: doc as Container };
}
