// Reads the input (JSON, or YAML with any number of documents) and writes it back with edits,
// keeping what is not edited: untouched YAML documents verbatim, edited ones through yaml's
// Document API (comments, key order, quoting), JSON with its key order and indent.
import type { Document } from "yaml";
import { parseAllDocumentsBounded, yamlLimitViolation } from "../policy/documents/yaml-limits.js";
import { applyJsonEdits, applyYamlEdits } from "./edits.js";
import type { Edit } from "./plan.js";

export interface ParsedInput {
  /** One plain value per document (JSON input: one). */
  values: unknown[];
  /** The text with `edits[i]` applied to document i (none or empty: unchanged). */
  render(edits: readonly (readonly Edit[] | undefined)[]): string;
}

export type ParseResult = { ok: true; input: ParsedInput } | { ok: false; message: string };

function parseJson(text: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `input is not valid JSON: ${(err as Error).message}` };
  }
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? (text.trim().includes("\n") ? "  " : "");
  const trailing = /\n\s*$/.test(text) ? "\n" : "";
  return {
    ok: true,
    input: {
      values: [value],
      render(edits) {
        if (!edits[0] || edits[0].length === 0) return text;
        const copy = structuredClone(value);
        applyJsonEdits(copy, edits[0]);
        return JSON.stringify(copy, null, indent) + trailing;
      },
    },
  };
}

/** Style of the input so edited documents look like it: indent width, `- ` under or beside the key. */
function yamlStyle(text: string): { indent: number; indentSeq: boolean } {
  const lines = text.split("\n");
  let indent = 2;
  let indentSeq = true;
  for (let i = 1; i < lines.length; i++) {
    const prev = lines[i - 1]!;
    if (!/:\s*$/.test(prev) || prev.trimStart().startsWith("#")) continue;
    const prevIndent = prev.length - prev.trimStart().length;
    const line = lines[i]!;
    const lineIndent = line.length - line.trimStart().length;
    if (line.trimStart().startsWith("- ")) {
      indentSeq = lineIndent > prevIndent;
      break;
    }
    if (lineIndent > prevIndent && indent === 2) indent = lineIndent - prevIndent;
  }
  return { indent, indentSeq };
}

function parseYaml(text: string): ParseResult {
  const tooComplex = yamlLimitViolation(text);
  if (tooComplex) return { ok: false, message: `input ${tooComplex}` };
  let docs: Document[];
  try {
    docs = parseAllDocumentsBounded(text);
  } catch (err) {
    return { ok: false, message: `input ${(err as Error).message}` };
  }
  const values: unknown[] = [];
  for (const [i, doc] of docs.entries()) {
    if (doc.errors.length > 0) return { ok: false, message: `input document ${i + 1} is not valid YAML: ${doc.errors[0]!.message}` };
    try {
      values.push(doc.toJS({ maxAliasCount: 100 }));
    } catch (err) {
      // An alias bomb (yaml's "Excessive alias count") or another value that cannot be built.
      return { ok: false, message: `input document ${i + 1} cannot be read: ${(err as Error).message}` };
    }
  }
  const starts = docs.map((d, i) => (i === 0 ? 0 : (d.range?.[0] ?? 0)));
  const style = yamlStyle(text);
  return {
    ok: true,
    input: {
      values,
      render(edits) {
        if (docs.length === 0) return text;
        return docs
          .map((doc, i) => {
            const mine = edits[i];
            if (!mine || mine.length === 0) return text.slice(starts[i], starts[i + 1] ?? text.length);
            const edited = doc.clone();
            applyYamlEdits(edited, mine);
            return edited.toString({ ...style, lineWidth: 0, flowCollectionPadding: false });
          })
          .join("");
      },
    },
  };
}

/** JSON when it parses as JSON (a flow-style YAML document that is not JSON falls back to YAML). */
export function parseInput(text: string): ParseResult {
  if (/^\s*[[{]/.test(text)) {
    const json = parseJson(text);
    if (json.ok) return json;
  }
  return parseYaml(text);
}
