// UTF-8 for the proxy-wasm emulator's host calls, with an ASCII fast path: header names, values and property
// paths are short ASCII almost always, and TextEncoder/TextDecoder cost microseconds per call on them (Envoy
// hands the module bytes it already holds). Same results as TextEncoder/TextDecoder for every input.
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const SHORT = 64;

export function utf8Bytes(text: string): Uint8Array {
  const n = text.length;
  if (n > SHORT) return encoder.encode(text);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) return encoder.encode(text);
    out[i] = c;
  }
  return out;
}

export function utf8Text(bytes: Uint8Array): string {
  const n = bytes.length;
  if (n > SHORT) return decoder.decode(bytes);
  for (let i = 0; i < n; i++) if (bytes[i]! > 0x7f) return decoder.decode(bytes);
  return String.fromCharCode.apply(null, bytes as unknown as number[]); // one flat string, no concatenation
}

// Header values go back to the module on every lookup: their bytes are made once and kept (read-only), so a
// lookup is one map probe and one memory copy instead of a walk over the characters.
const REMEMBERED_MAX_CHARS = 256;
const REMEMBERED_MAX_TEXTS = 4096;
const remembered = new Map<string, Uint8Array>();

/** utf8Bytes(text), shared between calls for short texts: the caller must not write into the result. */
export function utf8BytesRemembered(text: string): Uint8Array {
  let bytes = remembered.get(text);
  if (bytes !== undefined) return bytes;
  bytes = utf8Bytes(text);
  if (text.length > REMEMBERED_MAX_CHARS) return bytes;
  if (remembered.size >= REMEMBERED_MAX_TEXTS) remembered.clear();
  remembered.set(text, bytes);
  return bytes;
}
