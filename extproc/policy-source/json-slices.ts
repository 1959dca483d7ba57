// Splits JSON text into the raw text of a top-level object's members, or of an array's elements, without
// parsing the values: a reader that keeps what it parsed last time by text parses only the slices that changed.
// The scanner checks the punctuation between values and finds where each value ends; the values themselves are
// checked by whoever parses a slice (JSON.parse). Undefined whenever the text is not that shape: the caller
// then parses the whole text as before, and gets JSON.parse's error. Pure.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** The index just past the string starting at `i` (a quote), or -1 when it does not end. */
function stringEnd(text: string, i: number): number {
  // From quote to quote (indexOf, not a loop over every character): a quote ends the string unless an odd
  // number of backslashes comes right before it.
  for (let from = i + 1; ; ) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The index just past the value starting at `i` (no space before it), or -1 when its brackets never close. */
function valueEnd(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === QUOTE) return stringEnd(text, i);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // A number, true, false or null: up to the next delimiter (JSON.parse of the slice judges it).
    let j = i;
    while (j < text.length) {
      const c = text.charCodeAt(j);
      if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || c === COLON || isSpace(c)) break;
      j++;
    }
    return j > i ? j : -1;
  }
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === QUOTE) {
      j = stringEnd(text, j) - 1;
      if (j < 0) return -1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return -1;
}

/**
 * The raw text of each member of the object `text` holds, by name (a name given twice: the last, as JSON.parse
 * keeps it); undefined when `text` is not one object, with nothing but space around it.
 */
export function objectMembers(text: string): Map<string, string> | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACE) return undefined;
  const members = new Map<string, string>();
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) return skipSpace(text, i + 1) === text.length ? members : undefined;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    const nameEnd = stringEnd(text, i);
    if (nameEnd < 0) return undefined;
    let name: unknown;
    try {
      name = JSON.parse(text.slice(i, nameEnd));
    } catch {
      return undefined;
    }
    i = skipSpace(text, nameEnd);
    if (text.charCodeAt(i) !== COLON) return undefined;
    i = skipSpace(text, i + 1);
    const end = valueEnd(text, i);
    if (end < 0) return undefined;
    members.set(name as string, text.slice(i, end));
    i = skipSpace(text, end);
    const c = text.charCodeAt(i);
    if (c === CLOSE_BRACE) return skipSpace(text, i + 1) === text.length ? members : undefined;
    if (c !== COMMA) return undefined;
    i = skipSpace(text, i + 1);
  }
}

/** The raw text of each element of the array `text` holds; undefined when `text` is not one array. */
export function arrayElements(text: string): string[] | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACKET) return undefined;
  const elements: string[] = [];
  i = skipSpace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_BRACKET) return skipSpace(text, i + 1) === text.length ? elements : undefined;
  for (;;) {
    const end = valueEnd(text, i);
    if (end < 0) return undefined;
    elements.push(text.slice(i, end));
    i = skipSpace(text, end);
    const c = text.charCodeAt(i);
    if (c === CLOSE_BRACKET) return skipSpace(text, i + 1) === text.length ? elements : undefined;
    if (c !== COMMA) return undefined;
    i = skipSpace(text, i + 1);
  }
}
