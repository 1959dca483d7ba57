// Reads the signatures of a module's exported functions from its binary (type, import, function and
// export sections), which WebAssembly.Module.exports() does not expose.

export interface FunctionSignature { params: string[]; results: string[] }

const VALUE_TYPES: Record<number, string> = { 0x7f: "i32", 0x7e: "i64", 0x7d: "f32", 0x7c: "f64", 0x7b: "v128", 0x70: "funcref", 0x6f: "externref" };

class Cursor {
  constructor(private readonly bytes: Uint8Array, public pos = 0) {}
  byte(): number {
    if (this.pos >= this.bytes.length) throw new Error("wasm-binary: unexpected end of module");
    return this.bytes[this.pos++]!;
  }
  u32(): number {
    let result = 0, shift = 0, b: number;
    do { b = this.byte(); result |= (b & 0x7f) << shift; shift += 7; } while (b & 0x80);
    return result >>> 0;
  }
  name(): string {
    const length = this.u32();
    const text = new TextDecoder().decode(this.bytes.subarray(this.pos, this.pos + length));
    this.pos += length;
    return text;
  }
  limits(): void { const flags = this.byte(); this.u32(); if (flags & 1) this.u32(); }
  valueType(): string { const t = this.byte(); return VALUE_TYPES[t] ?? `0x${t.toString(16)}`; }
}

/** Exported function name → signature. Throws on a malformed module. */
export function exportedFunctionSignatures(bytes: Uint8Array): Map<string, FunctionSignature> {
  const cursor = new Cursor(bytes, 8);
  const types: FunctionSignature[] = [];
  const functionTypes: number[] = []; // imported functions first, then defined ones
  const exports: Array<[string, number]> = [];
  while (cursor.pos < bytes.length) {
    const id = cursor.byte();
    const size = cursor.u32();
    const end = cursor.pos + size;
    if (id === 1) {
      for (let n = cursor.u32(); n > 0; n--) {
        if (cursor.byte() !== 0x60) throw new Error("wasm-binary: unsupported type form");
        const params = Array.from({ length: cursor.u32() }, () => cursor.valueType());
        const results = Array.from({ length: cursor.u32() }, () => cursor.valueType());
        types.push({ params, results });
      }
    } else if (id === 2) {
      for (let n = cursor.u32(); n > 0; n--) {
        cursor.name(); cursor.name();
        const kind = cursor.byte();
        if (kind === 0) functionTypes.push(cursor.u32());
        else if (kind === 1) { cursor.byte(); cursor.limits(); }
        else if (kind === 2) cursor.limits();
        else if (kind === 3) { cursor.byte(); cursor.byte(); }
        else throw new Error(`wasm-binary: unknown import kind ${kind}`);
      }
    } else if (id === 3) {
      for (let n = cursor.u32(); n > 0; n--) functionTypes.push(cursor.u32());
    } else if (id === 7) {
      for (let n = cursor.u32(); n > 0; n--) {
        const name = cursor.name();
        const kind = cursor.byte();
        const index = cursor.u32();
        if (kind === 0) exports.push([name, index]);
      }
    }
    cursor.pos = end;
  }
  const out = new Map<string, FunctionSignature>();
  for (const [name, index] of exports) {
    const type = types[functionTypes[index] ?? -1];
    if (!type) throw new Error(`wasm-binary: export ${name} has no type`);
    out.set(name, type);
  }
  return out;
}
