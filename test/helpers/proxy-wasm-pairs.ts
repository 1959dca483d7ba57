// proxy-wasm "pairs" serialisation (headers, local-reply headers, http_call headers): little-endian
// u32 N, N × (u32 keyLen, u32 valueLen), then each key '\0' value '\0'. An empty map is 0 bytes.

export type HeaderPairs = Array<[string, string]>;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodePairs(pairs: HeaderPairs): Uint8Array {
  if (pairs.length === 0) return new Uint8Array(0);
  const encoded = pairs.map(([k, v]) => [encoder.encode(k), encoder.encode(v)] as const);
  const size = 4 + 8 * pairs.length + encoded.reduce((n, [k, v]) => n + k.length + v.length + 2, 0);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setUint32(0, pairs.length, true);
  let cursor = 4 + 8 * pairs.length;
  encoded.forEach(([k, v], i) => {
    view.setUint32(4 + 8 * i, k.length, true);
    view.setUint32(8 + 8 * i, v.length, true);
    out.set(k, cursor); cursor += k.length + 1;
    out.set(v, cursor); cursor += v.length + 1;
  });
  return out;
}

/** Decodes pairs; throws on malformed input (what Envoy reports as SerializationFailure / ParseFailure). */
export function decodePairs(bytes: Uint8Array): HeaderPairs {
  if (bytes.length === 0) return [];
  if (bytes.length < 4) throw new Error("pairs: truncated count");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0, true);
  let cursor = 4 + 8 * n;
  if (cursor > bytes.length) throw new Error("pairs: truncated sizes");
  const out: HeaderPairs = [];
  for (let i = 0; i < n; i++) {
    const keyLength = view.getUint32(4 + 8 * i, true);
    const valueLength = view.getUint32(8 + 8 * i, true);
    if (cursor + keyLength + valueLength + 2 > bytes.length) throw new Error("pairs: truncated data");
    if (bytes[cursor + keyLength] !== 0 || bytes[cursor + keyLength + 1 + valueLength] !== 0) {
      throw new Error("pairs: missing NUL terminator");
    }
    const key = decoder.decode(bytes.subarray(cursor, cursor + keyLength));
    cursor += keyLength + 1;
    const value = decoder.decode(bytes.subarray(cursor, cursor + valueLength));
    cursor += valueLength + 1;
    out.push([key, value]);
  }
  return out;
}
