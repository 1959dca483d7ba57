// Short ASCII texts read from module memory, remembered by where they lie: a module hands the host the same
// header names, values and property paths from the same addresses on every request, and building a fresh string
// for each costs far more than the host call it serves. A hit compares the bytes with the remembered ones, four at a
// time; results are the same strings a UTF-8 decode (then ASCII lowercasing, when asked) would give.

/** Texts longer than this are decoded by the caller every time (log lines, bodies). */
export const INTERNED_MAX_BYTES = 64;
/** Direct-mapped by address, length and case (2^SLOT_BITS slots): a newcomer takes the slot over. */
const SLOT_BITS = 10;
const SLOTS = 1 << SLOT_BITS;

function lowerAscii(byte: number): number {
  return byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte;
}

export class AsciiInterner {
  private readonly texts: string[] = new Array<string>(SLOTS).fill("");
  /** The bytes each slot's text was made from (before lowercasing), INTERNED_MAX_BYTES per slot. */
  private readonly sources = new DataView(new ArrayBuffer(SLOTS * INTERNED_MAX_BYTES));

  /**
   * The text of `length` bytes of `memory` from `start` (in range), lowercased (ASCII A–Z only, like Envoy's LowerCaseString)
   * when `lowercase`; undefined when the bytes are not short ASCII (the caller decodes them).
   */
  text(memory: DataView, start: number, length: number, lowercase: boolean): string | undefined {
    if (length > INTERNED_MAX_BYTES) return undefined;
    const slot = Math.imul(start ^ (length << 20) ^ (lowercase ? 1 << 30 : 0), 0x9e3779b1) >>> (32 - SLOT_BITS);
    const cached = this.texts[slot]!;
    if (cached.length === length && this.sameSource(memory, slot, start, length)) return cached;
    return this.remember(memory, slot, start, length, lowercase);
  }

  private sameSource(memory: DataView, slot: number, start: number, length: number): boolean {
    const sources = this.sources;
    const base = slot * INTERNED_MAX_BYTES;
    let i = 0;
    for (; i + 4 <= length; i += 4) if (memory.getUint32(start + i) !== sources.getUint32(base + i)) return false;
    for (; i < length; i++) if (memory.getUint8(start + i) !== sources.getUint8(base + i)) return false;
    return true;
  }

  private remember(memory: DataView, slot: number, start: number, length: number, lowercase: boolean): string | undefined {
    const codes = new Array<number>(length);
    for (let i = 0; i < length; i++) {
      const byte = memory.getUint8(start + i);
      if (byte > 0x7f) return undefined;
      codes[i] = lowercase ? lowerAscii(byte) : byte;
    }
    const text = String.fromCharCode(...codes); // one flat string, not a rope of concatenations
    const base = slot * INTERNED_MAX_BYTES;
    for (let i = 0; i < length; i++) this.sources.setUint8(base + i, memory.getUint8(start + i));
    this.texts[slot] = text;
    return text;
  }
}
