// Text (YAML or JSON, several documents per file) → validated policies plus per-document rejections.
// Never throws: every problem becomes a rejection with violations. Stable API used by the policy sources.
import { Composer, type Document } from "yaml";
import { addDocument, DOCUMENTS_PER_PAUSE, expand, expandAll, PARSE_LIMITS, type ParseOptions, type ParseResult, type RawDocument } from "./parse-simple.js";
import { boundedTokens, YamlLimitError, yamlLimitViolation } from "./yaml-limits.js";
import { simpleYamlDocuments } from "./simple-yaml.js";

export { validatePolicyObject } from "./normalize.js";
export { DOCUMENTS_PER_PAUSE, identify, PARSE_LIMITS, parseSimplePolicyText, type ParseOptions, type ParseResult, type RawDocument, type Rejected } from "./parse-simple.js";
export type { Policy, Violation } from "../model/types.js";

/**
 * Reads every document of a YAML/JSON text. A top-level list, or a REST list body `{items: [...]}`, is expanded
 * into its elements. Empty documents are skipped.
 */
export function parseDocuments(text: string): RawDocument[] {
  return [...documentsOf(text)];
}

/** The documents of `text` one at a time, so a caller may pause between them (see parsePolicyTextAsync). */
function* documentsOf(text: string): Generator<RawDocument> {
  if (text.length > PARSE_LIMITS.maxTextBytes) {
    yield { index: 0, violations: [{ field: "document", message: `text larger than ${PARSE_LIMITS.maxTextBytes} bytes` }] };
    return;
  }
  // The plain subset most policies are written in is read without the library (same values, simple-yaml.ts).
  const simple = simpleYamlDocuments(text);
  if (simple) {
    yield* expandAll(simple);
    return;
  }
  const tooComplex = yamlLimitViolation(text, PARSE_LIMITS);
  if (tooComplex) {
    yield { index: 0, violations: [{ field: "document", message: `text ${tooComplex}` }] };
    return;
  }
  // The parser is bounded too (boundedTokens): invalid YAML that error recovery nests deeper than the scan
  // sees stops there.
  let index = 0;
  try {
    // Parser + Composer is what parseAllDocuments does, one document at a time.
    const composer = new Composer({ uniqueKeys: true, prettyErrors: false });
    const composed = function* (): Generator<Document.Parsed> {
      for (const token of boundedTokens(text, PARSE_LIMITS)) yield* composer.next(token);
      yield* composer.end();
    };
    for (const doc of composed()) {
      if (index >= PARSE_LIMITS.maxDocuments) return;
      if (doc.errors.length > 0) {
        yield { index: index++, violations: doc.errors.slice(0, 5).map((e) => ({ field: "document", message: `invalid YAML: ${e.message}` })) };
        continue;
      }
      let value: unknown;
      try {
        value = doc.toJS({ maxAliasCount: PARSE_LIMITS.maxAliasCount });
      } catch (err) {
        yield { index: index++, violations: [{ field: "document", message: `invalid YAML: ${(err as Error).message}` }] };
        continue;
      }
      for (const v of expand(value)) yield { index: index++, value: v };
    }
  } catch (err) {
    const message = err instanceof YamlLimitError ? `text ${err.message}` : `cannot parse: ${(err as Error).message}`;
    yield { index, violations: [{ field: "document", message }] };
  }
}

/** Parses and validates every policy in `text`; the good ones load even when others are rejected. */
export function parsePolicyText(text: string, source?: string, opts: ParseOptions = {}): ParseResult {
  const result: ParseResult = { policies: [], resources: [], rejected: [] };
  for (const doc of documentsOf(text)) addDocument(result, doc, source, opts);
  return result;
}

/**
 * parsePolicyText for long texts on a server: awaits `pause()` every DOCUMENTS_PER_PAUSE documents so the
 * caller's event loop keeps serving (parsing 1 000 YAML policies takes ~150 ms of CPU).
 */
export async function parsePolicyTextAsync(text: string, source: string | undefined, pause: () => Promise<void>, opts: ParseOptions = {}): Promise<ParseResult> {
  const result: ParseResult = { policies: [], resources: [], rejected: [] };
  let sincePause = 0;
  for (const doc of documentsOf(text)) {
    addDocument(result, doc, source, opts);
    if (++sincePause === DOCUMENTS_PER_PAUSE) {
      sincePause = 0;
      await pause();
    }
  }
  return result;
}

