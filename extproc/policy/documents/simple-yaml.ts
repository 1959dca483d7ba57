// A fast reader for the plain subset of YAML that generated and most hand-written policies use: block
// mappings and sequences, one-line scalars (plain, or quoted with nothing to unescape), `---` between documents.
// Anything else (escapes, comments,
// flow collections, block scalars, anchors, tags, directives, floats, odd indentation…) is "not simple" and
// goes to the yaml library, so a text read here gives exactly what the library's toJS() gives
// (test/properties/simple-yaml.test.ts checks this against the library on random texts).

/** Characters that make a text not simple anywhere they appear. */
const NOT_SIMPLE_CHAR = /[^\n\x20-\x7e]|[#&*!|>%@`\\?]/;
/** A one-line quoted scalar with nothing to unescape: "…" with no `"`, or '…' with no `'`, inside. */
const QUOTED = /^(?:"[^"]*"|'[^']*')$/;
const KEY = /^[A-Za-z_][A-Za-z0-9_./-]*$/;
const NOT_STRING_KEY = /^(?:[Nn]ull|NULL|[Tt]rue|TRUE|[Ff]alse|FALSE|__proto__)$/;
const NULL = /^(?:~|[Nn]ull|NULL)$/;
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
/** Decimal integers that parse exactly (no leading zeros, no sign but `-`, within 2^53). */
const INT = /^(?:0|-?[1-9][0-9]{0,14})$/;
/** Digits then a unit (`10s`, `1ms`): a string, unless the letters could make it hex, octal or a float. */
const DIGITS_THEN_UNIT = /^[0-9]+[g-np-wyzG-NP-WYZ][A-Za-z]*$/;
const MAX_DEPTH = 32;
const MAX_DOCUMENTS = 50_000;

interface Line {
  indent: number;
  rest: string;
}

/** Thrown inside the reader when the text leaves the subset; never escapes this file. */
class NotSimple extends Error {}

/** The texts of the documents of `text` (without their `---` lines), or undefined when `text` is not simple. */
export function simpleDocumentTexts(text: string): string[] | undefined {
  return hasOnlySimpleCharacters(text) ? documentTexts(text) : undefined;
}

/**
 * Whether `text` is free of the characters and `...` lines that leave the subset. Checked document by document it
 * gives what checking their whole file gives (the `---` lines between them hold neither).
 */
export function hasOnlySimpleCharacters(text: string): boolean {
  // A `...` line in any document (the `---` lines between them are not such lines) makes the whole text not simple.
  return !NOT_SIMPLE_CHAR.test(text) && !/^\.\.\./m.test(text);
}

/**
 * The texts of the documents of `text` split at its `---` lines, or undefined when a line starts with `---` but
 * is more than that; their characters are not checked (hasOnlySimpleCharacters), so that a reader which has
 * seen a document before need not scan it again.
 */
export function documentTexts(text: string): string[] | undefined {
  const docs: string[] = [];
  let from = 0;
  let start = 0;
  for (;;) {
    const at = text.indexOf("---", start);
    if (at === -1) break;
    // "---" within a line (svc---x) is text; at a line start it must be the whole line.
    if (at > 0 && text.charCodeAt(at - 1) !== 10) {
      start = at + 3;
      continue;
    }
    const end = text.indexOf("\n", at);
    if ((end === -1 ? text.length : end) !== at + 3) return undefined;
    docs.push(text.slice(from, at));
    if (docs.length > MAX_DOCUMENTS) return undefined;
    from = end === -1 ? text.length : end + 1;
    start = from;
  }
  docs.push(text.slice(from));
  return docs;
}

/** The value of one document text (as simpleDocumentTexts splits them), or undefined when it is not simple. */
export function readSimpleDocument(doc: string): { value: unknown } | undefined {
  const lines: Line[] = [];
  for (const raw of doc.split("\n")) {
    if (raw === "") continue;
    if (raw.endsWith(" ")) return undefined;
    let indent = 0;
    while (raw.charCodeAt(indent) === 32) indent++;
    lines.push({ indent, rest: raw.slice(indent) });
  }
  if (lines.length === 0) return { value: null };
  if (lines[0]!.indent !== 0) return undefined;
  const reader = new Reader(lines);
  try {
    const value = reader.node(0, 0);
    return reader.at === lines.length ? { value } : undefined;
  } catch (err) {
    if (err instanceof NotSimple) return undefined;
    throw err;
  }
}

/** Every document's value, or undefined when any part of `text` is not simple. */
export function simpleYamlDocuments(text: string): unknown[] | undefined {
  const docs = simpleDocumentTexts(text);
  if (!docs) return undefined;
  const values: unknown[] = [];
  for (const d of docs) {
    const read = readSimpleDocument(d);
    if (!read) return undefined;
    values.push(read.value);
  }
  return values;
}

function isSeqItem(rest: string): boolean {
  return rest === "-" || rest.startsWith("- ");
}

/** `key:` or `key: value` → [key, value text or ""], else undefined. */
function mapEntry(rest: string): [string, string] | undefined {
  const colon = rest.indexOf(":");
  if (colon <= 0) return undefined;
  const after = rest.slice(colon + 1);
  if (after !== "" && !after.startsWith(" ")) return undefined;
  return [rest.slice(0, colon), after.slice(1)];
}

class Reader {
  at = 0;
  constructor(private readonly lines: Line[]) {}

  node(indent: number, depth: number): unknown {
    return isSeqItem(this.lines[this.at]!.rest) ? this.seq(indent, depth) : this.map(indent, depth);
  }

  /** The block below a `key:` (or, with `seqAtIndent` false, a `-`) line, or null when the next line is not deeper. */
  private child(indent: number, depth: number, seqAtIndent = true): unknown {
    const next = this.lines[this.at];
    if (!next || next.indent < indent) return null;
    // A sequence may sit at its key's indentation (`from:` then `- targetRef:` below it).
    if (next.indent === indent) return seqAtIndent && isSeqItem(next.rest) ? this.seq(indent, depth + 1) : null;
    return this.node(next.indent, depth + 1);
  }

  /** After a one-line value, the next line must not be deeper (that would be a continuation or an error). */
  private noDeeper(indent: number): void {
    const next = this.lines[this.at];
    if (next && next.indent > indent) throw new NotSimple();
  }

  private map(indent: number, depth: number): Record<string, unknown> {
    if (depth > MAX_DEPTH) throw new NotSimple(); // deep texts go to the library, which rejects them past its limit
    const out: Record<string, unknown> = {};
    for (let line = this.lines[this.at]; line && line.indent === indent; line = this.lines[this.at]) {
      if (isSeqItem(line.rest)) throw new NotSimple();
      const entry = mapEntry(line.rest);
      if (!entry) throw new NotSimple();
      const [key, text] = entry;
      if (!KEY.test(key) || (mayNotBeStringKey(key) && NOT_STRING_KEY.test(key)) || Object.prototype.hasOwnProperty.call(out, key)) throw new NotSimple();
      this.at++;
      if (text === "") out[key] = this.child(indent, depth);
      else {
        out[key] = scalar(text);
        this.noDeeper(indent);
      }
    }
    return out;
  }

  private seq(indent: number, depth: number): unknown[] {
    if (depth > MAX_DEPTH) throw new NotSimple();
    const out: unknown[] = [];
    for (let line = this.lines[this.at]; line && line.indent === indent && isSeqItem(line.rest); line = this.lines[this.at]) {
      if (line.rest === "-") {
        this.at++;
        out.push(this.child(indent, depth, false));
        continue;
      }
      const item = line.rest.slice(2);
      if (item.startsWith(" ") || isSeqItem(item)) throw new NotSimple();
      const entry = mapEntry(item);
      if (entry && KEY.test(entry[0])) {
        // `- key: value`: a mapping whose keys sit at the item's column.
        this.lines[this.at] = { indent: indent + 2, rest: item };
        out.push(this.map(indent + 2, depth + 1));
      } else {
        this.at++;
        out.push(scalar(item));
        this.noDeeper(indent);
      }
      const next = this.lines[this.at];
      if (next && next.indent > indent) throw new NotSimple();
    }
    return out;
  }
}

/** Whether `key` starts as a NOT_STRING_KEY can (n N t T f F _): only then is that pattern tried. */
function mayNotBeStringKey(key: string): boolean {
  const c = key.charCodeAt(0);
  return c === 110 || c === 78 || c === 116 || c === 84 || c === 102 || c === 70 || c === 95;
}

/** A plain one-line scalar as YAML 1.2's core schema resolves it; NotSimple for anything this subset leaves out. */
function scalar(s: string): unknown {
  if (QUOTED.test(s)) return s.slice(1, -1);
  if (s.includes('"') || s.includes("'")) throw new NotSimple();
  if (s === "[]") return [];
  if (s === "{}") return {};
  if (s.startsWith(" ") || /[[\]{},]/.test(s) || s.includes(": ") || s.endsWith(":")) throw new NotSimple();
  // Each pattern is tried only for the first characters it can start with (most values are names: none).
  const c = s.charCodeAt(0);
  if ((c === 126 || c === 110 || c === 78) && NULL.test(s)) return null; // ~ n N
  if ((c === 116 || c === 84 || c === 102 || c === 70) && BOOL.test(s)) return s[0] === "t" || s[0] === "T"; // t T f F
  if (((c >= 48 && c <= 57) || c === 45) && INT.test(s)) return Number(s); // digits, -
  if (c >= 48 && c <= 57) {
    if (DIGITS_THEN_UNIT.test(s)) return s;
    throw new NotSimple();
  }
  if (!/^[A-Za-z_/]/.test(s)) throw new NotSimple(); // indicators, signs, `.inf`, `~x`…
  return s;
}
