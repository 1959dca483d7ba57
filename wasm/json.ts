// A tiny JSON reader for plugin configuration and the sidecar's /drain body. Pure; never traps:
// malformed input, excess depth or size yield null. Numbers are f64; strings support all escapes.

export const enum JsonKind { Null, Bool, Number, String, Array, Object }

export class JsonValue {
  kind: JsonKind = JsonKind.Null;
  boolValue: bool = false;
  numberValue: f64 = 0;
  /** For numbers: no fraction and no exponent, so numberValue is exact. */
  integral: bool = true;
  stringValue: string = "";
  keys: string[] = [];
  items: JsonValue[] = [];

  /** Member of an object by key, or null (also for non-objects). Last duplicate wins. */
  get(key: string): JsonValue | null {
    if (this.kind != JsonKind.Object) return null;
    for (let i = this.keys.length - 1; i >= 0; i--) {
      if (unchecked(this.keys[i]) == key) return unchecked(this.items[i]);
    }
    return null;
  }
}

const MAX_DEPTH = 16;

class Reader {
  pos: i32 = 0;
  digitStart: i32 = 0;
  failed: bool = false;
  constructor(public text: string) {}

  peek(): i32 { return this.text.charCodeAt(this.pos); } // -1 past the end

  skipSpace(): void {
    for (;;) {
      const c = this.peek();
      if (c == 0x20 || c == 0x09 || c == 0x0a || c == 0x0d) this.pos++;
      else return;
    }
  }

  fail(): JsonValue { this.failed = true; return new JsonValue(); }

  literal(word: string): bool {
    if (this.text.substr(this.pos, word.length) != word) return false;
    this.pos += word.length;
    return true;
  }

  value(depth: i32): JsonValue {
    if (depth > MAX_DEPTH) return this.fail();
    this.skipSpace();
    const c = this.peek();
    const out = new JsonValue();
    if (c == 0x7b) return this.object(depth);
    if (c == 0x5b) return this.array(depth);
    if (c == 0x22) {
      out.kind = JsonKind.String;
      out.stringValue = this.string();
      return out;
    }
    if (c == 0x74 && this.literal("true")) { out.kind = JsonKind.Bool; out.boolValue = true; return out; }
    if (c == 0x66 && this.literal("false")) { out.kind = JsonKind.Bool; return out; }
    if (c == 0x6e && this.literal("null")) return out;
    if (c == 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    return this.fail();
  }

  object(depth: i32): JsonValue {
    const out = new JsonValue();
    out.kind = JsonKind.Object;
    this.pos++; // '{'
    this.skipSpace();
    if (this.peek() == 0x7d) { this.pos++; return out; }
    for (;;) {
      this.skipSpace();
      if (this.peek() != 0x22) return this.fail();
      const key = this.string();
      if (this.failed) return out;
      this.skipSpace();
      if (this.peek() != 0x3a) return this.fail();
      this.pos++;
      const member = this.value(depth + 1);
      if (this.failed) return out;
      out.keys.push(key);
      out.items.push(member);
      this.skipSpace();
      const c = this.peek();
      this.pos++;
      if (c == 0x2c) continue;
      if (c == 0x7d) return out;
      return this.fail();
    }
  }

  array(depth: i32): JsonValue {
    const out = new JsonValue();
    out.kind = JsonKind.Array;
    this.pos++; // '['
    this.skipSpace();
    if (this.peek() == 0x5d) { this.pos++; return out; }
    for (;;) {
      const item = this.value(depth + 1);
      if (this.failed) return out;
      out.items.push(item);
      this.skipSpace();
      const c = this.peek();
      this.pos++;
      if (c == 0x2c) continue;
      if (c == 0x5d) return out;
      return this.fail();
    }
  }

  string(): string {
    this.pos++; // opening quote
    let out = "";
    let runStart = this.pos;
    for (;;) {
      const c = this.peek();
      if (c < 0x20) { this.failed = true; return ""; } // end of input (-1) or raw control char
      if (c == 0x22) {
        out += this.text.substring(runStart, this.pos);
        this.pos++;
        return out;
      }
      if (c != 0x5c) { this.pos++; continue; }
      out += this.text.substring(runStart, this.pos);
      const e = this.text.charCodeAt(this.pos + 1);
      this.pos += 2;
      if (e == 0x22 || e == 0x5c || e == 0x2f) out += String.fromCharCode(e);
      else if (e == 0x62) out += "\b";
      else if (e == 0x66) out += "\f";
      else if (e == 0x6e) out += "\n";
      else if (e == 0x72) out += "\r";
      else if (e == 0x74) out += "\t";
      else if (e == 0x75) {
        const code = hex4(this.text, this.pos);
        if (code < 0) { this.failed = true; return ""; }
        out += String.fromCharCode(code);
        this.pos += 4;
      } else { this.failed = true; return ""; }
      runStart = this.pos;
    }
    return out; // unreachable: the loop only exits by return
  }

  /** Parsed by hand (no strtod: it would double the module). The value is the integer part
   * (exact below 2^53); `integral` is false when a fraction or exponent was present. */
  number(): JsonValue {
    const out = new JsonValue();
    out.kind = JsonKind.Number;
    let sign: f64 = 1;
    if (this.peek() == 0x2d) { sign = -1; this.pos++; }
    if (!this.digits()) return this.fail();
    let value: f64 = 0;
    for (let i = this.digitStart; i < this.pos; i++) value = value * 10 + <f64>(this.text.charCodeAt(i) - 0x30);
    out.numberValue = sign * value;
    if (this.peek() == 0x2e) {
      this.pos++;
      out.integral = false;
      if (!this.digits()) return this.fail();
    }
    const e = this.peek();
    if (e == 0x65 || e == 0x45) {
      this.pos++;
      out.integral = false;
      const expSign = this.peek();
      if (expSign == 0x2b || expSign == 0x2d) this.pos++;
      if (!this.digits()) return this.fail();
    }
    return out;
  }

  /** Skip a run of digits, remembering where it started; false when there is none. */
  digits(): bool {
    const start = this.pos;
    this.digitStart = start;
    for (;;) {
      const c = this.peek();
      if (c < 0x30 || c > 0x39) break;
      this.pos++;
    }
    return this.pos > start;
  }
}

function hex4(text: string, at: i32): i32 {
  let code = 0;
  for (let i = 0; i < 4; i++) {
    const c = text.charCodeAt(at + i);
    let digit = -1;
    if (c >= 0x30 && c <= 0x39) digit = c - 0x30;
    else if (c >= 0x61 && c <= 0x66) digit = c - 0x61 + 10;
    else if (c >= 0x41 && c <= 0x46) digit = c - 0x41 + 10;
    if (digit < 0) return -1;
    code = (code << 4) | digit;
  }
  return code;
}

/** The whole text as one JSON value, or null when it is not exactly one valid value. */
export function parseJson(text: string): JsonValue | null {
  const reader = new Reader(text);
  reader.skipSpace();
  if (reader.pos == text.length) return new JsonValue(); // blank text reads as null; callers tell it apart
  const value = reader.value(0);
  if (reader.failed) return null;
  reader.skipSpace();
  if (reader.pos != text.length) return null;
  return value;
}
