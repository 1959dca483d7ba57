// A tiny JSON reader over UTF-8 bytes (plugin configuration, the sidecar's /drain body). Pure; never
// traps: malformed input or excess depth yield null. Strings are unescaped in place in the input,
// and values point into it (no String is built). Numbers are f64; strings support all escapes.
import { equalsAscii } from "./abi/writer";

export const enum JsonKind { Null, Bool, Number, String, Array, Object }

export class JsonValue {
  kind: JsonKind = JsonKind.Null;
  boolValue: bool = false;
  numberValue: f64 = 0;
  /** For numbers: no fraction and no exponent, so numberValue is exact. */
  integral: bool = true;
  /** A string's (unescaped UTF-8) bytes, and a member's key, as ranges of the input. */
  start: usize = 0;
  length: i32 = 0;
  keyStart: usize = 0;
  keyLength: i32 = 0;
  /** Members of an object / items of an array, as a list. */
  first: JsonValue | null = null;
  next: JsonValue | null = null;
  /** Set on members someone asked for by key (what is left unread is unknown to the reader). */
  read: bool = false;

  /** Member of an object by key (marked read), or null (also for non-objects). Last duplicate wins. */
  get(key: string): JsonValue | null {
    let found: JsonValue | null = null;
    if (this.kind != JsonKind.Object) return null;
    let member = this.first;
    while (member !== null) {
      if (equalsAscii(member.keyStart, member.keyLength, key)) {
        member.read = true;
        found = member;
      }
      member = member.next;
    }
    return found;
  }

  /** A copy of a string's bytes. */
  bytes(): ArrayBuffer {
    const out = new ArrayBuffer(this.length);
    memory.copy(changetype<usize>(out), this.start, <usize>this.length);
    return out;
  }
}

const MAX_DEPTH = 16;

class Reader {
  pos: usize;
  end: usize;
  failed: bool = false;
  /** Value of the last run of digits(). */
  digitsValue: f64 = 0;

  constructor(input: ArrayBuffer) {
    this.pos = changetype<usize>(input);
    this.end = this.pos + <usize>input.byteLength;
  }

  peek(): i32 { return this.pos < this.end ? <i32>load<u8>(this.pos) : -1; }

  /** Skips whitespace; returns the next byte (-1 at the end). */
  skipSpace(): i32 {
    let c = this.peek();
    while (c == 0x20 || c == 0x09 || c == 0x0a || c == 0x0d) {
      this.pos++;
      c = this.peek();
    }
    return c;
  }

  fail(): JsonValue { this.failed = true; return new JsonValue(); }

  /** The next 4 bytes as one little-endian word (0 when fewer remain): literals compare in one go. */
  word(): u32 {
    return this.pos + 4 <= this.end ? load<u32>(this.pos) : 0;
  }

  value(depth: i32): JsonValue {
    const c = this.skipSpace();
    const out = new JsonValue();
    if (depth > MAX_DEPTH) return this.fail();
    if (c == 0x7b || c == 0x5b) return this.list(depth, c == 0x7b);
    if (c == 0x22) {
      out.kind = JsonKind.String;
      this.string(out);
      return out;
    }
    const word = this.word();
    if (word == 0x6c6c756e) { this.pos += 4; return out; } // "null"
    out.kind = JsonKind.Bool;
    if (word == 0x65757274) { this.pos += 4; out.boolValue = true; return out; } // "true"
    if (word == 0x736c6166 && this.pos + 4 < this.end && load<u8>(this.pos + 4) == 0x65) { this.pos += 5; return out; } // "false"
    if (c == 0x2d || (c >= 0x30 && c <= 0x39)) return this.number(out);
    return this.fail();
  }

  /** An object (members with keys) or an array (items), after its opening bracket. */
  list(depth: i32, isObject: bool): JsonValue {
    const out = new JsonValue();
    out.kind = isObject ? JsonKind.Object : JsonKind.Array;
    const close = isObject ? 0x7d : 0x5d;
    this.pos++;
    if (this.skipSpace() == close) { this.pos++; return out; }
    let last: JsonValue | null = null;
    for (;;) {
      const key = new JsonValue();
      if (isObject) {
        if (this.skipSpace() != 0x22) return this.fail();
        this.string(key);
        if (this.failed) return out;
        if (this.skipSpace() != 0x3a) return this.fail();
        this.pos++;
      }
      const member = this.value(depth + 1);
      if (this.failed) return out;
      member.keyStart = key.start;
      member.keyLength = key.length;
      if (last === null) out.first = member;
      else last.next = member;
      last = member;
      const c = this.skipSpace();
      this.pos++;
      if (c == 0x2c) continue;
      if (c == close) return out;
      return this.fail();
    }
    return out; // unreachable: the loop only exits by return
  }

  /** A string after its opening quote, unescaped in place (never longer than its escaped form). */
  string(out: JsonValue): void {
    this.pos++;
    const start = this.pos;
    let write = start;
    for (;;) {
      const c = this.peek();
      if (c < 0x20) { this.failed = true; return; } // end of input (-1) or raw control char
      this.pos++;
      if (c == 0x22) break;
      if (c != 0x5c) { store<u8>(write++, c); continue; }
      const e = this.peek();
      this.pos++;
      let code = e;
      if (e == 0x62) code = 0x08;
      else if (e == 0x66) code = 0x0c;
      else if (e == 0x6e) code = 0x0a;
      else if (e == 0x72) code = 0x0d;
      else if (e == 0x74) code = 0x09;
      else if (e == 0x75) {
        code = this.hex4();
        // A surrogate pair written as two escapes is one code point.
        if (code >= 0xd800 && code < 0xdc00 && this.peek() == 0x5c && this.pos + 1 < this.end && load<u8>(this.pos + 1) == 0x75) {
          this.pos += 2;
          const low = this.hex4();
          if (low >= 0xdc00 && low < 0xe000) code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          else { write = utf8Store(write, code); code = low; }
        }
        if (code < 0) { this.failed = true; return; }
      } else if (e != 0x22 && e != 0x5c && e != 0x2f) { this.failed = true; return; }
      write = utf8Store(write, code);
    }
    out.start = start;
    out.length = <i32>(write - start);
  }

  /** Four hex digits after `\u`; -1 when they are not. */
  hex4(): i32 {
    let code = 0;
    for (let i = 0; i < 4; i++) {
      const c = this.peek();
      const lower = c | 0x20;
      let digit = -1;
      if (c >= 0x30 && c <= 0x39) digit = c - 0x30;
      else if (lower >= 0x61 && lower <= 0x66) digit = lower - 0x61 + 10;
      if (digit < 0) return -1;
      code = (code << 4) | digit;
      this.pos++;
    }
    return code;
  }

  /** Parsed by hand (no strtod: it would double the module). The value is the integer part
   * (exact below 2^53); `integral` is false when a fraction or exponent was present. */
  number(out: JsonValue): JsonValue {
    out.kind = JsonKind.Number;
    let sign: f64 = 1;
    if (this.peek() == 0x2d) { sign = -1; this.pos++; }
    if (!this.digits()) return this.fail();
    out.numberValue = sign * this.digitsValue;
    if (this.peek() == 0x2e) {
      this.pos++;
      out.integral = false;
      if (!this.digits()) return this.fail();
    }
    const e = this.peek() | 0x20;
    if (e == 0x65) {
      this.pos++;
      out.integral = false;
      const expSign = this.peek();
      if (expSign == 0x2b || expSign == 0x2d) this.pos++;
      if (!this.digits()) return this.fail();
    }
    return out;
  }

  /** Read a run of digits into digitsValue; false when there is none. */
  digits(): bool {
    const start = this.pos;
    let value: f64 = 0;
    for (let c = this.peek(); c >= 0x30 && c <= 0x39; c = this.peek()) {
      value = value * 10 + <f64>(c - 0x30);
      this.pos++;
    }
    this.digitsValue = value;
    return this.pos > start;
  }
}

/** UTF-8 of one code point (a lone surrogate as its 3-byte form) at `at`; returns the next position. */
function utf8Store(at: usize, code: i32): usize {
  if (code < 0x80) {
    store<u8>(at, code);
    return at + 1;
  }
  let count = code < 0x800 ? 1 : code < 0x10000 ? 2 : 3;
  store<u8>(at, (0xff00 >> (count + 1)) | (code >> (6 * count))); // 110x / 1110 / 11110 lead
  for (let i = 1; i <= count; i++) store<u8>(at + <usize>i, 0x80 | ((code >> (6 * (count - i))) & 0x3f));
  return at + 1 + <usize>count;
}

/**
 * The whole input as one JSON value, or null when it is not exactly one valid value. The input's
 * bytes are rewritten (strings unescaped in place) and must outlive the result.
 */
export function parseJson(input: ArrayBuffer): JsonValue | null {
  const reader = new Reader(input);
  const value = reader.value(0);
  if (reader.failed || reader.skipSpace() != -1) return null;
  return value;
}
