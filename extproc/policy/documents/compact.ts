// Detaches a policy that is held for long from the text it was parsed from. YAML's parser hands out substrings
// of the whole file, and V8 keeps a substring as a view of its parent: one held name would keep a file of
// 1 000 policies alive. Compacting copies every string once per load and shares repeated ones.

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether intern() copies (see detachNothing). */
let copyStrings = true;

/**
 * Makes intern() hand strings back as they are: for a parse worker, whose results are structured-cloned to the
 * main thread, where every string arrives as a fresh copy of its own (copying it here first was a tenth of a
 * 10 000-policy load's CPU).
 */
export function detachNothing(): void {
  copyStrings = false;
}

/** Shares equal strings within one load; each distinct string is copied out of its source text once. */
export class StringTable {
  private readonly table = new Map<string, string>();
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder("utf-8", { ignoreBOM: true }); // keeps a leading U+FEFF: the default drops it

  intern(s: string): string {
    if (!copyStrings) return s;
    let copy = this.table.get(s);
    if (copy === undefined) {
      // Short strings are never views (V8 copies substrings under 13 characters); longer ones are re-decoded:
      // through UTF-8 when they are well-formed, through UTF-16 when they hold a lone surrogate (YAML's "\ud800"),
      // which UTF-8 would turn into U+FFFD.
      copy = s.length < 13 ? s : LONE_SURROGATE.test(s) ? Buffer.from(s, "utf16le").toString("utf16le") : this.decoder.decode(this.encoder.encode(s));
      this.table.set(copy, copy);
    }
    return copy;
  }
}

/** A deep copy of a plain JSON-like value whose strings (keys' values and array items) come from `strings`. */
export function compact<T>(value: T, strings: StringTable): T {
  if (typeof value === "string") return strings.intern(value) as T;
  if (Array.isArray(value)) return value.map((v) => compact(v, strings)) as T;
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = compact(v, strings);
    return out as T;
  }
  return value;
}
