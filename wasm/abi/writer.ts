// Bounded UTF-8 text builder over static memory (log lines, metric names): ASCII constants, raw
// bytes and decimals. Past its capacity it drops the rest: truncated text, never a trap.

export class Writer {
  length: i32 = 0;
  constructor(public base: usize, public capacity: i32) {}

  reset(): Writer {
    this.length = 0;
    return this;
  }

  byte(value: i32): Writer {
    const length = this.length;
    if (length < this.capacity) {
      store<u8>(this.base + <usize>length, value);
      this.length = length + 1;
    }
    return this;
  }

  /** An ASCII string (our constants and the runtime's messages): one byte per UTF-16 unit. */
  text(value: string): Writer {
    const chars = changetype<usize>(value);
    for (let i = 0, n = value.length; i < n; i++) this.byte(load<u16>(chars + (<usize>i << 1)));
    return this;
  }

  bytes(ptr: usize, length: i32): Writer {
    for (let i = 0; i < length; i++) this.byte(load<u8>(ptr + <usize>i));
    return this;
  }

  buffer(value: ArrayBuffer): Writer {
    return this.bytes(changetype<usize>(value), value.byteLength);
  }

  decimal(value: u64): Writer {
    let divisor: u64 = 1;
    while (value / divisor >= 10) divisor *= 10;
    do {
      this.byte(0x30 + <i32>(value / divisor % 10));
      divisor /= 10;
    } while (divisor != 0);
    return this;
  }
}

/** Bytes of an ASCII constant (header names, metric names, defaults), for the host. */
export function ascii(value: string): ArrayBuffer {
  const out = new ArrayBuffer(value.length);
  const chars = changetype<usize>(value);
  for (let i = 0, n = value.length; i < n; i++) store<u8>(changetype<usize>(out) + <usize>i, load<u16>(chars + (<usize>i << 1)));
  return out;
}

/** Do `length` bytes at `ptr` spell the ASCII constant `value`? */
export function equalsAscii(ptr: usize, length: i32, value: string): bool {
  if (length != value.length) return false;
  const chars = changetype<usize>(value);
  for (let i = 0; i < length; i++) {
    if (<u32>load<u8>(ptr + <usize>i) != <u32>load<u16>(chars + (<usize>i << 1))) return false;
  }
  return true;
}
