// The part of policy parsing that never loads the yaml library: texts in the plain YAML subset (simple-yaml.ts)
// read into validated policies, resources and rejections, and the types and limits parse.ts shares. A parse
// worker that meets only plain texts starts without the library (parse.ts loads it for everything else).
import { isObj } from "./issues.js";
import type { KumaVersion } from "../model/kuma-version.js";
import { validatePolicyObject } from "./normalize.js";
import { isResourceDocument, resourceFromObject, type Resource } from "./resources.js";
import type { Policy, Violation } from "../model/types.js";
import { readSimpleDocument, simpleYamlDocuments } from "./simple-yaml.js";
import { YAML_LIMITS } from "./yaml-bounds.js";

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

/** Documents' values as documentsOf yields them: expanded, numbered, at most PARSE_LIMITS.maxDocuments. */
export function* expandAll(values: readonly unknown[]): Generator<RawDocument> {
  let index = 0;
  for (const value of values) {
    if (index >= PARSE_LIMITS.maxDocuments) return;
    for (const v of expand(value)) yield { index: index++, value: v };
  }
}

export function expand(value: unknown): unknown[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value;
  if (isObj(value) && Array.isArray(value.items) && value.type === undefined && value.kind === undefined) return value.items;
  return [value];
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

/**
 * parseSimplePolicyText for one document text as simple-yaml.ts simpleDocumentTexts split it from its file (so
 * its characters, `---` and `...` lines were checked there): the same result without scanning the text again.
 */
export function parseSimpleDocument(doc: string, source?: string, opts: ParseOptions = {}): ParseResult | undefined {
  if (doc.length > PARSE_LIMITS.maxTextBytes) return undefined;
  const read = readSimpleDocument(doc);
  if (!read) return undefined;
  const result: ParseResult = { policies: [], resources: [], rejected: [] };
  for (const d of expandAll([read.value])) addDocument(result, d, source, opts);
  return result;
}

/** Documents handled between two pauses: small enough that a pause comes every few milliseconds. */
export const DOCUMENTS_PER_PAUSE = 25;

export function addDocument(result: ParseResult, doc: RawDocument, source: string | undefined, opts: ParseOptions): void {
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
