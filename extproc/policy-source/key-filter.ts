// A Bloom filter over a file's dropped policy keys (policy-file.ts FileState.droppedFilter): combining a directory's
// files asks whether a key held by an earlier file is among a later file's dropped keys, and a "no" from the filter
// spares splitting that file's list of keys (thousands per file) on every scan. A "maybe" reads the list.

/** Bits per key: about 0.05 % false positives with PROBES probes. */
const BITS_PER_KEY = 16;
const PROBES = 10;

/** Two 32-bit hashes of a key (FNV-1a and a multiply-xorshift) for double hashing. */
export function keyHashes(key: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9e3779b9;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return [a >>> 0, (b | 1) >>> 0];
}

export function keyFilter(keys: readonly string[]): Uint32Array {
  const words = Math.max(2, Math.ceil((keys.length * BITS_PER_KEY) / 32));
  const filter = new Uint32Array(words);
  const bits = words * 32;
  for (const key of keys) {
    const [a, b] = keyHashes(key);
    for (let i = 0; i < PROBES; i++) {
      const bit = (a + Math.imul(i, b)) >>> 0;
      const at = bit % bits;
      filter[at >>> 5]! |= 1 << (at & 31);
    }
  }
  return filter;
}

/** False when `key` is certainly not among the filter's keys. */
export function mayHoldKey(filter: Uint32Array, key: string): boolean {
  return mayHoldHashed(filter, keyHashes(key));
}

/** mayHoldKey for a key's keyHashes (worked out once for a key asked of many filters). */
export function mayHoldHashed(filter: Uint32Array, [a, b]: readonly [number, number]): boolean {
  const bits = filter.length * 32;
  for (let i = 0; i < PROBES; i++) {
    const at = ((a + Math.imul(i, b)) >>> 0) % bits;
    if ((filter[at >>> 5]! & (1 << (at & 31))) === 0) return false;
  }
  return true;
}
