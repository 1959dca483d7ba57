// The one check every YAML input goes through before the parser sees it: a linear scan that bounds the
// nesting depth (flow brackets and block style: indentation, `- - -`, `- a: - a:`) and the node count.
// The yaml library's parser is quadratic in depth and its composer recursive, so deep input must stop here.

export interface YamlLimits {
  /** Deepest accepted nesting, counted separately for flow and block style. */
  maxDepth: number;
  /** Most accepted entries; unbounded when absent. */
  maxNodes?: number;
}

/** Defaults shared by every caller; the control plane adds its own maxNodes. */
export const YAML_LIMITS: YamlLimits = { maxDepth: 64 };

export interface YamlShape {
  /** Upper bound of `[`/`{` nesting. */
  flowDepth: number;
  /** Upper bound of block nesting: indentation levels plus compact indicators (`- - x`, `- a: - b`). */
  blockDepth: number;
  /** Upper bound of the entries (a line break, comma, bracket, `-` or `?` precedes each). */
  nodes: number;
}

const SPACE = 32;
const TAB = 9;
const LF = 10;
const CR = 13;

const isBlank = (c: number | undefined) => c === SPACE || c === TAB || c === LF || c === CR || c === undefined || Number.isNaN(c);

/**
 * One pass over `text`, following YAML's lexical rules where they decide what is structure: a quote or a
 * bracket opens only where a scalar may start (so `don't` or `a[b` in a plain scalar hide nothing), and
 * `#` after a blank starts a comment. Where the rules are unclear the scan counts more, never less.
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
  let quote = 0; // 0, or the char code of the open quote
  let atStart = true; // a scalar, a quote or a flow collection may start here
  let lineStart = 0;
  let newLine = true;
  for (let i = 0; i < text.length; i++) {
    if (flowDepth > maxDepth || blockDepth > maxDepth || nodes > maxNodes) break; // already over: no need to read on
    const c = text.charCodeAt(i);
    if (quote !== 0) {
      if (c === 92 /* \ */ && quote === 34) i++;
      else if (c === quote) {
        if (quote === 39 && text.charCodeAt(i + 1) === 39) i++; // '' inside single quotes
        else quote = 0;
      } else if (c === LF) lineStart = i + 1;
      continue;
    }
    if (newLine) {
      // Indentation: a line deeper than the open levels nests one more; a shallower one closes levels.
      let j = i;
      while (text.charCodeAt(j) === SPACE) j++;
      const next = text.charCodeAt(j);
      if (next === LF || next === CR || next === 35 /* # */ || j >= text.length) {
        // A blank or comment-only line: no structure. Stop on its line break; the next line starts after it.
        i = next === 35 ? skipComment(text, j) : j;
        if (text.charCodeAt(i) === LF) lineStart = i + 1;
        continue;
      }
      const column = j - lineStart;
      while (stack.length > 0 && stack[stack.length - 1]! >= column) stack.pop();
      stack.push(column);
      blockDepth = Math.max(blockDepth, stack.length);
      newLine = false;
      atStart = true;
      i = j - 1;
      continue;
    }
    if (c === LF) {
      nodes++;
      newLine = true;
      lineStart = i + 1;
      continue;
    }
    if (c === SPACE || c === TAB || c === CR) continue;
    if (c === 35 && isBlank(text.charCodeAt(i - 1))) {
      i = skipComment(text, i) - 1;
      continue;
    }
    const blankAfter = isBlank(text.charCodeAt(i + 1)) || i + 1 >= text.length;
    if ((c === 45 /* - */ || c === 63 /* ? */) && atStart && blankAfter) {
      nodes++;
      pushIndicator(i);
      continue;
    }
    if (c === 58 /* : */ && (blankAfter || flow > 0)) {
      if (blankAfter && flow === 0) pushIndicator(i); // inside brackets `a: b` nests nothing
      atStart = true;
      continue;
    }
    if (c === 91 /* [ */ || c === 123 /* { */) {
      if (atStart || flow > 0) {
        nodes++;
        flowDepth = Math.max(flowDepth, ++flow);
        atStart = true;
        continue;
      }
    } else if ((c === 93 /* ] */ || c === 125) /* } */ && flow > 0) {
      flow--;
      atStart = false;
      continue;
    } else if (c === 44 /* , */ && flow > 0) {
      nodes++;
      atStart = true;
      continue;
    } else if ((c === 39 || c === 34) && atStart) {
      quote = c;
      atStart = false;
      continue;
    } else if ((c === 38 /* & */ || c === 33) /* ! */ && atStart) {
      // An anchor or a tag: the node itself (quote, bracket, scalar) starts after it.
      while (i + 1 < text.length && !isBlank(text.charCodeAt(i + 1))) i++;
      continue;
    }
    atStart = false;
  }
  return { flowDepth, blockDepth, nodes };

  /** An indicator at `at` opens a block level at the column of what follows it. */
  function pushIndicator(at: number): void {
    let j = at + 1;
    while (text.charCodeAt(j) === SPACE || text.charCodeAt(j) === TAB) j++;
    const column = j - lineStart;
    while (stack.length > 0 && stack[stack.length - 1]! >= column) stack.pop();
    stack.push(column);
    blockDepth = Math.max(blockDepth, stack.length);
    atStart = true;
  }
}

function skipComment(text: string, at: number): number {
  const end = text.indexOf("\n", at);
  return end === -1 ? text.length : end;
}

/** Why `text` must not reach the YAML parser ("nests deeper than 64 levels"), or undefined when within the limits. */
export function yamlLimitViolation(text: string, limits: YamlLimits = YAML_LIMITS): string | undefined {
  const shape = yamlShape(text, limits);
  if (shape.flowDepth > limits.maxDepth || shape.blockDepth > limits.maxDepth) return `nests deeper than ${limits.maxDepth} levels`;
  if (limits.maxNodes !== undefined && shape.nodes > limits.maxNodes) return `has more than ${limits.maxNodes} nodes`;
  return undefined;
}
