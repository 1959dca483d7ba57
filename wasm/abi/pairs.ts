// proxy-wasm "pairs" serialisation for headers sent to the host (local replies, http_call):
// u32 N, N x (u32 keyLen, u32 valueLen), then each key '\0' value '\0'; all little-endian.

export function encodePairs(keys: string[], values: string[]): ArrayBuffer {
  const n = min(keys.length, values.length);
  let size = 4 + 8 * n;
  for (let i = 0; i < n; i++) {
    size += String.UTF8.byteLength(unchecked(keys[i])) + String.UTF8.byteLength(unchecked(values[i])) + 2;
  }
  const out = new ArrayBuffer(size);
  const base = changetype<usize>(out);
  store<u32>(base, <u32>n);
  let cursor = base + 4 + 8 * <usize>n;
  for (let i = 0; i < n; i++) {
    const key = unchecked(keys[i]);
    const value = unchecked(values[i]);
    store<u32>(base + 4 + 8 * <usize>i, <u32>String.UTF8.byteLength(key));
    store<u32>(base + 8 + 8 * <usize>i, <u32>String.UTF8.byteLength(value));
    // encodeUnsafe returns the bytes written, the trailing NUL included.
    cursor += String.UTF8.encodeUnsafe(changetype<usize>(key), key.length, cursor, true);
    cursor += String.UTF8.encodeUnsafe(changetype<usize>(value), value.length, cursor, true);
  }
  return out;
}
