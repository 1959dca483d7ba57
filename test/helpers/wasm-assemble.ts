// Byte-level pieces for hand-assembling tiny test modules (sections, vectors, names, function types), so a test
// can make the emulator link exactly the imports and exports it is about.

export const uleb = (n: number): number[] => (n < 0x80 ? [n] : [(n & 0x7f) | 0x80, ...uleb(n >>> 7)]);
export const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
export const name = (s: string): number[] => [...uleb(s.length), ...Buffer.from(s)];
export const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
/** (i32 × params) → (i32 × results) */
export const funcType = (params: number, results: number): number[] =>
  [0x60, ...vec(Array(params).fill([0x7f])), ...vec(Array(results).fill([0x7f]))];
export const MAGIC_AND_VERSION = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
