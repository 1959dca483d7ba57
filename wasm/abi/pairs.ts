// proxy-wasm "pairs" serialisation for headers sent to the host (local replies, http_call):
// u32 N, N x (u32 keyLen, u32 valueLen), then each key '\0' value '\0'; all little-endian.

/** `items` alternates key, value (UTF-8 bytes). */
export function encodePairs(items: StaticArray<ArrayBuffer>): ArrayBuffer {
  const n = items.length >> 1;
  let size = 4 + 8 * n;
  for (let i = 0; i < n << 1; i++) size += unchecked(items[i]).byteLength + 1;
  const out = new ArrayBuffer(size);
  const base = changetype<usize>(out);
  store<u32>(base, <u32>n);
  let cursor = base + 4 + 8 * <usize>n;
  for (let i = 0; i < n << 1; i++) {
    const item = unchecked(items[i]);
    const length = <usize>item.byteLength;
    store<u32>(base + 4 + 4 * <usize>i, <u32>length);
    memory.copy(cursor, changetype<usize>(item), length);
    cursor += length + 1; // the NUL: ArrayBuffer memory starts zeroed
  }
  return out;
}
