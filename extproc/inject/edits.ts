// Applies planned Edits to a YAML Document (keeping comments, key order and style of the rest)
// or to a plain JSON value (keeping key order). Both create missing parents as maps/lists.
import { type Document, isCollection, isSeq } from "yaml";
import type { Edit } from "./plan.js";
import type { Path } from "./workload.js";

/** A value at `path` that may not exist yet: wrap it in its missing parents. */
function wrap(path: Path, value: unknown): unknown {
  return path.reduceRight<unknown>((inner, key) => (typeof key === "number" ? [inner] : { [key]: inner }), value);
}

export function applyYamlEdits(doc: Document, edits: readonly Edit[]): void {
  for (const edit of edits) {
    if (edit.op === "insert" || edit.op === "remove") {
      const seq = doc.getIn(edit.path, true);
      if (isSeq(seq)) {
        if (edit.op === "insert") seq.items.splice(edit.index, 0, doc.createNode(edit.value));
        else seq.items.splice(edit.index, 1);
      } else if (edit.op === "insert") {
        applyYamlEdits(doc, [{ op: "append", path: edit.path, value: edit.value }]);
      }
      continue;
    }
    // depth: length of the longest prefix of the path that is an existing map or list.
    let depth = 0;
    while (depth < edit.path.length && isCollection(doc.getIn(edit.path.slice(0, depth + 1), true))) depth++;
    if (edit.op === "append" && depth === edit.path.length) {
      doc.addIn(edit.path, doc.createNode(edit.value));
      continue;
    }
    // Below the existing part (missing, or an empty `annotations:`), create the rest as one node.
    const value = edit.op === "append" ? [edit.value] : edit.value;
    const at = Math.min(depth + 1, edit.path.length);
    doc.setIn(edit.path.slice(0, at), doc.createNode(wrap(edit.path.slice(at), value)));
  }
}

function isContainer(x: unknown): x is Record<string | number, unknown> {
  return typeof x === "object" && x !== null;
}

export function applyJsonEdits(root: unknown, edits: readonly Edit[]): void {
  for (const edit of edits) {
    if (edit.op === "insert" || edit.op === "remove") {
      const parentPath = edit.path.slice(0, -1);
      const key = edit.path.at(-1)!;
      const parent = parentPath.reduce<unknown>((at, k) => (isContainer(at) ? at[k] : undefined), root);
      const list = isContainer(parent) ? parent[key] : undefined;
      if (Array.isArray(list)) {
        if (edit.op === "insert") list.splice(edit.index, 0, structuredClone(edit.value));
        else list.splice(edit.index, 1);
      } else if (edit.op === "insert") {
        applyJsonEdits(root, [{ op: "append", path: edit.path, value: edit.value }]);
      }
      continue;
    }
    let at = root as Record<string | number, unknown>;
    for (const [i, key] of edit.path.entries()) {
      const last = i === edit.path.length - 1;
      if (last && edit.op === "set") {
        at[key] = structuredClone(edit.value);
      } else if (last) {
        if (!Array.isArray(at[key])) at[key] = [];
        (at[key] as unknown[]).push(structuredClone(edit.value));
      } else {
        if (!isContainer(at[key])) at[key] = typeof edit.path[i + 1] === "number" ? [] : {};
        at = at[key] as Record<string | number, unknown>;
      }
    }
  }
}
