// Text (YAML or JSON, several documents per file) → validated policies plus per-document rejections.
// Never throws: every problem becomes a rejection with violations. Stable API used by the policy sources.
import { Composer, type Document } from "yaml";
import { isObj } from "./issues.js";
import type { KumaVersion } from "../model/kuma-version.js";
import { validatePolicyObject } from "./normalize.js";
import { isResourceDocument, resourceFromObject, type Resource } from "./resources.js";
import type { Policy, Violation } from "../model/types.js";
import { boundedTokens, YAML_LIMITS, YamlLimitError, yamlLimitViolation } from "./yaml-limits.js";
import { simpleYamlDocuments } from "./simple-yaml.js";

export { validatePolicyObject };
export type { Policy, Violation };

/** Limits that keep a hostile file from exhausting memory (billion-laughs aliases, huge inputs). */
export const PARSE_LIMITS = { maxAliasCount: 100, maxTextBytes: 16 << 20, maxDocuments: 50_000, maxDepth: YAML_LIMITS.maxDepth } as const;

export interface Rejected {
  source?: string;
  index: number;
  kind?: string;
  name?: string;
  violations: Violation[];
}

export interface ParseResult {
  policies: Policy[];
  /** Mesh / MeshService / MeshExternalService / MeshMultiZoneService documents found among the policies. */
  resources: Resource[];
  rejected: Rejected[];
}

/** How to read: the Kuma version whose validators decide (default 2.14). */
export interface ParseOptions {
  kumaVersion?: KumaVersion;
}

/** One candidate object read from the text, or the reason the text around it could not be read. */
export interface RawDocument {
  index: number;
  value?: unknown;
  violations?: Violation[];
}

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

/** Documents' values as documentsOf yields them: expanded, numbered, at most PARSE_LIMITS.maxDocuments. */
function* expandAll(values: readonly unknown[]): Generator<RawDocument> {
  let index = 0;
  for (const value of values) {
    if (index >= PARSE_LIMITS.maxDocuments) return;
    for (const v of expand(value)) yield { index: index++, value: v };
  }
}

function expand(value: unknown): unknown[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value;
  if (isObj(value) && Array.isArray(value.items) && value.type === undefined && value.kind === undefined) return value.items;
  return [value];
}

/** Parses and validates every policy in `text`; the good ones load even when others are rejected. */
export function parsePolicyText(text: string, source?: string, opts: ParseOptions = {}): ParseResult {
  const result: ParseResult = { policies: [], resources: [], rejected: [] };
  for (const doc of documentsOf(text)) addDocument(result, doc, source, opts);
  return result;
}

/** parsePolicyText for a text in the plain subset (documents/simple-yaml.ts); undefined for any other text. */
export function parseSimplePolicyText(text: string, source?: string, opts: ParseOptions = {}): ParseResult | undefined {
  if (text.length > PARSE_LIMITS.maxTextBytes) return undefined;
  const values = simpleYamlDocuments(text);
  if (!values) return undefined;
  const result: ParseResult = { policies: [], resources: [], rejected: [] };
  for (const doc of expandAll(values)) addDocument(result, doc, source, opts);
  return result;
}

/** Documents handled between two pauses: small enough that a pause comes every few milliseconds. */
export const DOCUMENTS_PER_PAUSE = 25;

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

function addDocument(result: ParseResult, doc: RawDocument, source: string | undefined, opts: ParseOptions): void {
  if (doc.violations) {
    result.rejected.push(withSource({ index: doc.index, violations: doc.violations }, source));
    return;
  }
  if (isResourceDocument(doc.value)) {
    const { resource, violations } = resourceFromObject(doc.value);
    if (resource) result.resources.push(resource);
    else result.rejected.push(withSource({ index: doc.index, ...identify(doc.value), violations }, source));
    return;
  }
  const { policy, violations } = validatePolicyObject(doc.value, opts.kumaVersion);
  if (policy) {
    if (source !== undefined) policy.source = source;
    result.policies.push(policy);
  } else {
    result.rejected.push(withSource({ index: doc.index, ...identify(doc.value), violations }, source));
  }
}

/** Best-effort kind and name of a document that failed validation, for logs. */
export function identify(value: unknown): { kind?: string; name?: string } {
  if (!isObj(value)) return {};
  const meta = isObj(value.metadata) ? value.metadata : {};
  const kind = typeof value.type === "string" ? value.type : typeof value.kind === "string" ? value.kind : undefined;
  const ns = typeof meta.namespace === "string" && meta.namespace ? `.${meta.namespace}` : "";
  const name = typeof value.name === "string" ? value.name : typeof meta.name === "string" ? `${meta.name}${ns}` : undefined;
  return { ...(kind ? { kind } : {}), ...(name ? { name } : {}) };
}

function withSource(r: Rejected, source?: string): Rejected {
  return source === undefined ? r : { source, ...r };
}
