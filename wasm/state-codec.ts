// PURE (de)serialisation of DrainState for shared data, so every worker VM reads the same state.
// Layout (25 bytes, little-endian): u8 version+draining (0x10 | draining), i64 sinceMs,
// i64 deadlineMs, i64 polledAtMs. Decoding never traps; anything else → null.
import { DrainState } from "./drain";

const SIZE = 25;
const VERSION: u8 = 0x10;

export function encodeState(state: DrainState): ArrayBuffer {
  const out = new ArrayBuffer(SIZE);
  const base = changetype<usize>(out);
  store<u8>(base, VERSION | (state.draining ? 1 : 0));
  store<i64>(base + 1, state.sinceMs);
  store<i64>(base + 9, state.deadlineMs);
  store<i64>(base + 17, state.polledAtMs);
  return out;
}

export function decodeState(bytes: ArrayBuffer): DrainState | null {
  if (bytes.byteLength != SIZE) return null;
  const base = changetype<usize>(bytes);
  const head = load<u8>(base);
  if ((head & 0xfe) != VERSION) return null;
  return new DrainState((head & 1) == 1, load<i64>(base + 1), load<i64>(base + 9), load<i64>(base + 17));
}

/** A lone i64 (the poll lease deadline); 0 when the bytes are not exactly 8. */
export function encodeMs(ms: i64): ArrayBuffer {
  const out = new ArrayBuffer(8);
  store<i64>(changetype<usize>(out), ms);
  return out;
}

export function decodeMs(bytes: ArrayBuffer): i64 {
  return bytes.byteLength == 8 ? load<i64>(changetype<usize>(bytes)) : 0;
}
