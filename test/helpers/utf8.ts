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
