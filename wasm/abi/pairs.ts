// proxy-wasm "pairs" serialisation for headers sent to the host (local replies, http_call):
// u32 N, N x (u32 keyLen, u32 valueLen), then each key '\0' value '\0'; all little-endian.

export function encodePairs(keys: string[], values: string[]): ArrayBuffer {
  const n = min(keys.length, values.length);
  const keyBytes = new Array<ArrayBuffer>(n);
  const valueBytes = new Array<ArrayBuffer>(n);
  let size = 4 + 8 * n;
  for (let i = 0; i < n; i++) {
    keyBytes[i] = String.UTF8.encode(keys[i]);
    valueBytes[i] = String.UTF8.encode(values[i]);
    size += keyBytes[i].byteLength + valueBytes[i].byteLength + 2;
  }
  const out = new ArrayBuffer(size);
  const base = changetype<usize>(out);
  store<u32>(base, <u32>n);
  let cursor = base + 4 + 8 * <usize>n;
  for (let i = 0; i < n; i++) {
    const key = keyBytes[i];
    const value = valueBytes[i];
    store<u32>(base + 4 + 8 * <usize>i, <u32>key.byteLength);
    store<u32>(base + 8 + 8 * <usize>i, <u32>value.byteLength);
    memory.copy(cursor, changetype<usize>(key), <usize>key.byteLength);
    cursor += <usize>key.byteLength;
    store<u8>(cursor++, 0);
    memory.copy(cursor, changetype<usize>(value), <usize>value.byteLength);
    cursor += <usize>value.byteLength;
    store<u8>(cursor++, 0);
  }
  return out;
}
