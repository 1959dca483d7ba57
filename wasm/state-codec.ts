// PURE (de)serialisation of DrainState for shared data, so every worker VM reads the same state:
// "v1;<draining 0|1>;<sinceMs>;<deadlineMs>;<polledAtMs>". Decoding never traps; bad input → null.
import { DrainState } from "./drain";

export function encodeState(state: DrainState): string {
  return "v1;" + (state.draining ? "1" : "0") + ";" + state.sinceMs.toString() + ";" +
    state.deadlineMs.toString() + ";" + state.polledAtMs.toString();
}

/** Reads ';'-separated non-negative integers; `failed` once anything is off. */
class Fields {
  pos: i32 = 0;
  failed: bool = false;
  constructor(public text: string) {}

  next(): i64 {
    let value: i64 = 0;
    const start = this.pos;
    for (;;) {
      const c = this.text.charCodeAt(this.pos);
      if (c < 0x30 || c > 0x39) break;
      value = value * 10 + <i64>(c - 0x30);
      this.pos++;
    }
    const length = this.pos - start;
    if (length == 0 || length > 18) this.failed = true;
    if (this.pos < this.text.length) {
      if (this.text.charCodeAt(this.pos) != 0x3b) this.failed = true;
      this.pos++;
    }
    return value;
  }
}

export function decodeState(text: string): DrainState | null {
  if (!text.startsWith("v1;")) return null;
  const fields = new Fields(text);
  fields.pos = 3;
  const draining = fields.next();
  const sinceMs = fields.next();
  const deadlineMs = fields.next();
  const polledAtMs = fields.next();
  if (fields.failed || fields.pos != text.length || draining > 1) return null;
  if (text.charCodeAt(text.length - 1) == 0x3b) return null;
  return new DrainState(draining == 1, sinceMs, deadlineMs, polledAtMs);
}
