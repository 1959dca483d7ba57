// The one check every YAML input goes through before the parser sees it: a linear scan, on the yaml
// library's own lexer, that bounds the nesting depth (flow brackets and block style: indentation, `- - -`,
// `- a: - a:`) and the node count. The library's parser is quadratic in depth and its composer recursive, so
// deep input must stop here; test/properties/yaml-scan.test.ts checks the bound against the parser's stack.
import { Composer, type Document, type DocumentOptions, Lexer, type ParseOptions, Parser, parseDocument, type SchemaOptions, type ToJSOptions, YAMLParseError } from "yaml";
import type { CST } from "yaml";

import { YAML_LIMITS, type YamlLimits } from "./yaml-bounds.js";

export { YAML_LIMITS, type YamlLimits };

export interface YamlShape {
  /** Upper bound of `[`/`{` nesting. */
  flowDepth: number;
  /** Upper bound of block nesting: indentation levels plus compact indicators (`- - x`, `- a: - b`). */
  blockDepth: number;
  /** Upper bound of the entries (a line break, comma, bracket, `-` or `?` precedes each). */
  nodes: number;
}

/** The lexer's zero-width markers (document start, scalar follows, flow error end): no text of their own. */
const DOCUMENT = "\u0002";
const SCALAR = "\u001f";
const FLOW_ERROR_END = "\u0018";

/**
 * One pass over `text` with the yaml library's own lexer (the one its parser reads), so what is structure
 * follows YAML's scalar rules exactly: block scalars (`|`, `>`: their lines are text, whatever they hold),
 * single and double quotes, plain scalars (`don't`, `a[b`), comments, flow and block context. Depth is counted
 * as the parser nests: a line's first token opens a level at its column (closing the levels at or right of
 * it), and so does what follows a block indicator (`- `, `? `, `: `). Stops reading once over `stopAbove`.
 * The lexer itself is linear and keeps no stack; only the parser behind it grows with depth.
 */
export function yamlShape(text: string, stopAbove?: YamlLimits): YamlShape {
  const maxDepth = stopAbove?.maxDepth ?? Infinity;
  const maxNodes = stopAbove?.maxNodes ?? Infinity;
  let flow = 0;
  let flowDepth = 0;
  let blockDepth = 0;
  let nodes = 0;
  /** Columns of the open block levels on the current path (each one deeper than the one before). */
  const stack: number[] = [];
  let pos = 0;
  let lineStart = 0;
  let atLineStart = true;
  /** A block indicator was read: what follows it (on this line or, failing that, at the line break) nests. */
  let indicator = false;
  /** A block scalar header was read: the scalar the lexer marks next is its body. */
  let blockHeader = false;
  /** This token is a block scalar's body: text, not structure. */
  let blockBody = false;
  /** The lexer marked this token as a scalar's text (a plain `|` in brackets is one, not a header). */
  let scalarNext = false;
  /**
   * Per open bracket, the `:` read since its last `,`: from the second on, each is a block mapping the parser
   * nests inside the flow while recovering from `[a: b: c:` (one `:` per entry nests nothing).
   */
  const colons: number[] = [];
  let flowMaps = 0;
  /**
   * Per open bracket, how many block levels were open at it: inside brackets the parser starts block
   * collections afresh whatever the column, so a line there closes only the levels opened inside them.
   */
  const floors: number[] = [];
  const open = (column: number) => {
    const floor = floors.length > 0 ? floors[floors.length - 1]! : 0;
    while (stack.length > floor && stack[stack.length - 1]! >= column) stack.pop();
    stack.push(column);
    blockDepth = Math.max(blockDepth, stack.length + flowMaps);
  };
  for (const token of new Lexer().lex(text)) {
    if (flowDepth > maxDepth || blockDepth > maxDepth || nodes > maxNodes) break; // already over: no need to read on
    if (token === SCALAR) {
      blockBody = blockHeader;
      blockHeader = false;
      scalarNext = true;
      continue;
    }
    const isScalar = scalarNext;
    scalarNext = false;
    if (token === DOCUMENT || token === FLOW_ERROR_END) continue;
    const at = pos;
    pos += token.length;
    if (blockBody) {
      // A block scalar's lines (even a `'` or `[` in them): count its line breaks as entries, nest nothing.
      blockBody = false;
      nodes += newlinesAfter(token, at);
      continue;
    }
    const c = token.charCodeAt(0);
    if (c === 10 /* \n */ || (c === 13 /* \r */ && token.charCodeAt(1) === 10)) {
      if (indicator) open(at - lineStart);
      indicator = false;
      nodes++;
      atLineStart = true;
      lineStart = pos;
      continue;
    }
    if (c === 32 || c === 9 || c === 35 /* # */ || c === 0xfeff) continue; // indentation, separation, comments, BOM
    if (atLineStart || indicator) open(at - lineStart);
    atLineStart = false;
    indicator = false;
    if (token === "-" || token === "?") {
      // Also inside brackets: the parser recovers from `[` + `- - -` by nesting block sequences in the flow.
      nodes++;
      indicator = true;
    } else if (token === ":") {
      indicator = flow === 0; // inside brackets `a: b` nests nothing by itself
      if (flow > 0 && ++colons[colons.length - 1]! > 1) {
        flowMaps++;
        blockDepth = Math.max(blockDepth, stack.length + flowMaps);
      }
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      nodes++;
      flowDepth = Math.max(flowDepth, ++flow);
      colons.push(0);
      floors.push(stack.length);
    } else if (c === 93 /* ] */ || c === 125 /* } */) {
      if (flow > 0) {
        flow--;
        flowMaps -= Math.max(0, colons.pop()! - 1);
        stack.length = floors.pop()!;
      }
    } else if (c === 44 /* , */) {
      nodes++;
      if (flow > 0) {
        flowMaps -= Math.max(0, colons[colons.length - 1]! - 1);
        colons[colons.length - 1] = 0;
      }
    } else if ((c === 124 /* | */ || c === 62) /* > */ && !isScalar) {
      blockHeader = true;
    } else {
      // A scalar (plain or quoted, perhaps over several lines), anchor, tag, alias, directive or marker.
      nodes += newlinesAfter(token, at);
    }
  }
  return { flowDepth, blockDepth, nodes };

  /** Counts the line breaks inside a token and moves the line start past the last one. */
  function newlinesAfter(token: string, at: number): number {
    let n = 0;
    for (let i = token.indexOf("\n"); i !== -1; i = token.indexOf("\n", i + 1)) {
      n++;
      lineStart = at + i + 1;
    }
    if (n > 0 && token.endsWith("\n")) atLineStart = true;
    return n;
  }
}

/** Why `text` must not reach the YAML parser ("nests deeper than 64 levels"), or undefined when within the limits. */
export function yamlLimitViolation(text: string, limits: YamlLimits = YAML_LIMITS): string | undefined {
  const shape = yamlShape(text, limits);
  if (shape.flowDepth > limits.maxDepth || shape.blockDepth > limits.maxDepth) return `nests deeper than ${limits.maxDepth} levels`;
  if (limits.maxNodes !== undefined && shape.nodes > limits.maxNodes) return `has more than ${limits.maxNodes} nodes`;
  return undefined;
}

/** The parser went deeper than the limits allow (on text the scan let through: only invalid YAML does that). */
export class YamlLimitError extends Error {
  constructor(limits: YamlLimits) {
    super(`nests deeper than ${limits.maxDepth} levels`);
    this.name = "YamlLimitError";
  }
}

/** Room on the parser's stack for the document and the scalar being read, above the collections. */
export const PARSER_STACK_OVERHEAD = 3;

/**
 * The parser's tokens for `text`, the parser fed one lexeme at a time and stopped (YamlLimitError) as soon as
 * its stack is deeper than flow plus block depth may make it: the bound holds even where error recovery on
 * invalid YAML nests more than the scan can see, and each step costs at most that depth.
 */
export function* boundedTokens(text: string, limits: YamlLimits = YAML_LIMITS): Generator<CST.Token> {
  const parser = new Parser();
  const maxStack = 2 * limits.maxDepth + PARSER_STACK_OVERHEAD;
  for (const lexeme of new Lexer().lex(text)) {
    yield* parser.next(lexeme);
    if (parser.stack.length > maxStack) throw new YamlLimitError(limits);
  }
  yield* parser.end();
}

/** parseAllDocuments on boundedTokens: throws YamlLimitError past the depth limit. */
export function parseAllDocumentsBounded(text: string, options: DocumentOptions & ParseOptions & SchemaOptions = {}, limits: YamlLimits = YAML_LIMITS): Document.Parsed[] {
  const composer = new Composer(options);
  const docs: Document.Parsed[] = [];
  for (const token of boundedTokens(text, limits)) for (const doc of composer.next(token)) docs.push(doc);
  for (const doc of composer.end()) docs.push(doc);
  return docs;
}

/** parseDocument on boundedTokens (one document; more is an error on it, as in the library). */
export function parseDocumentBounded(text: string, options: DocumentOptions & ParseOptions & SchemaOptions = {}, limits: YamlLimits = YAML_LIMITS): Document.Parsed {
  const docs = parseAllDocumentsBounded(text, options, limits);
  const doc = docs[0] ?? parseDocument("", options);
  if (docs.length > 1) doc.errors.push(new YAMLParseError(docs[1]!.range.slice(0, 2) as [number, number], "MULTIPLE_DOCS", "Source contains multiple documents; please use YAML.parseAllDocuments()"));
  return doc;
}

/** YAML.parse on boundedTokens: the first error throws, as in the library. */
export function parseYamlBounded(text: string, options: DocumentOptions & ParseOptions & SchemaOptions & ToJSOptions = {}, limits: YamlLimits = YAML_LIMITS): unknown {
  const doc = parseDocumentBounded(text, options, limits);
  if (doc.errors.length > 0) throw doc.errors[0];
  return doc.toJS(options);
}
