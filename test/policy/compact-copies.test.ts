// compact copies › what interning does to what a policy holds: values kept code unit for code unit (lone surrogates,
// a leading U+FEFF), long strings detached from the text they were cut from, and one copy for a repeated string.
import test from "ava";
import v8 from "node:v8";
import vm from "node:vm";
import { compact, StringTable } from "../../extproc/policy/documents/compact.js";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

/** The heap in use after a full collection. */
function heapUsed(): number {
  gc();
  return v8.getHeapStatistics().used_heap_size;
}

const MB16 = 16 << 20;

/** `len` characters cut from a fresh 16 MB text, handed to `keep`; the text itself is not held here once this returns. */
function cutFromBigText<T>(len: number, keep: (cut: string) => T): T {
  const text = `${"y".repeat(MB16)}z`;
  return keep(text.slice(1000, 1000 + len));
}

/** How much more heap is in use while `make()`'s result is held (in a separate frame, so nothing else stays live). */
function heldBy<T>(make: () => T): { value: T; bytes: number } {
  const before = heapUsed();
  const held = [make()];
  const bytes = heapUsed() - before;
  return { value: held[0]!, bytes };
}

test("compact copies › given strings of lone surrogates anywhere in them, when interned, then each comes back unchanged", (t) => {
  // Given strings of 13+ code units: only lone high surrogates, only lone low ones, and one of each between letters
  const strings = new StringTable();
  const cases = ["\ud800".repeat(13), "\udc00".repeat(13), "abcdefghijklmn\ud800xyz", "abcdefghijklmn\udc00xyz"];
  for (const s of cases) {
    // When interned; then the same code units come back, none turned into U+FFFD
    t.is(strings.intern(s), s, JSON.stringify(s));
  }
});

test("compact copies › given a string that starts with U+FEFF, when interned, then the character is kept, short or long", (t) => {
  // Given values starting with a zero-width no-break space (YAML "\ufeff…"), of 3 and of 17 characters
  const strings = new StringTable();
  for (const s of ["\ufeffab", "\ufeffabcdefghijklmnop"]) {
    // When interned, and compacted inside a policy-like value; then the value is unchanged
    t.is(strings.intern(s), s, JSON.stringify(s));
    t.deepEqual(compact({ match: [s] }, new StringTable()), { match: [s] });
  }
});

test("compact copies › given a 13-character string cut from a 16 MB text, when interned, then holding it does not hold the text", (t) => {
  // Given a cut of 13 characters (the shortest V8 keeps as a view of its parent) and one of 40
  for (const len of [13, 40]) {
    const strings = new StringTable();
    // When interned and held
    const { value, bytes } = heldBy(() => cutFromBigText(len, (cut) => strings.intern(cut)));
    // Then it is the cut, and what stays in use is far below the 16 MB text
    t.is(value, "y".repeat(len));
    t.true(bytes < MB16 / 4, `${len} characters held ${bytes} bytes`);
  }
});

test("compact copies › given a policy-like value holding a string cut from a 16 MB text, when compacted, then the copy does not hold the text", (t) => {
  // Given { name, tags: [cut] } with a 40-character cut; when compacted and held
  const { value, bytes } = heldBy(() => cutFromBigText(40, (cut) => compact({ name: cut, tags: [cut] }, new StringTable())));
  // Then the values are the cut, and the 16 MB text is not kept alive
  t.deepEqual(value, { name: "y".repeat(40), tags: ["y".repeat(40)] });
  t.true(bytes < MB16 / 4, `held ${bytes} bytes`);
});

test("compact copies › given one 256 KB string cut 64 times from its text, when each cut is interned, then one copy is held for all", (t) => {
  // Given a text and 64 separate cuts of the same 256 KB
  const strings = new StringTable();
  const size = 256 << 10;
  const text = `${"q".repeat(size + 10)}`;
  // When every cut is interned and the results held
  const { value, bytes } = heldBy(() => Array.from({ length: 64 }, () => strings.intern(text.slice(5, 5 + size))));
  // Then each is equal to the cut, and the 64 results take about one copy (64 copies would be 16 MB)
  t.true(value.every((v) => v.length === size));
  t.true(bytes < 4 * size, `held ${bytes} bytes`);
});
