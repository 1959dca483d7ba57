// The Bloom filter over a file's dropped policy keys (key-filter.ts): its hashes, its size per key and its probes per key.
import test from "ava";
import { keyFilter, keyHashes, mayHoldHashed, mayHoldKey } from "../../extproc/policy-source/key-filter.js";

function bitsSet(filter: Uint32Array): number {
  let n = 0;
  for (const w of filter) for (let v = w; v !== 0; v &= v - 1) n++;
  return n;
}

test("key filter › given keys, when hashed, then the first hash is 32-bit FNV-1a over every character and the second is odd", (t) => {
  // Published FNV-1a 32-bit test vectors.
  const fnv1a: Array<[string, number]> = [["", 0x811c9dc5], ["a", 0xe40c292c], ["foobar", 0xbf9cf968]];
  for (const [key, want] of fnv1a) {
    const [a, b] = keyHashes(key);
    t.is(a, want, `FNV-1a of ${JSON.stringify(key)}`);
    t.is(b % 2, 1, `second hash of ${JSON.stringify(key)} is odd`);
  }
  t.notDeepEqual(keyHashes("ab"), keyHashes("a"), "the last character counts");
});

test("key filter › given n keys, then the filter has 16 bits per key, at least two words", (t) => {
  const cases: Array<[number, number]> = [[0, 2], [1, 2], [4, 2], [5, 3], [100, 50], [1001, 501]];
  for (const [n, words] of cases) {
    const keys = Array.from({ length: n }, (_, i) => `mesh/policy-${i}`);
    t.is(keyFilter(keys).length, words, `${n} keys`);
  }
});

test("key filter › given one key, then it sets exactly its ten probe bits, and a key asked by its hashes answers as by its name", (t) => {
  for (const key of ["default/mtp-1", "other/mhr", "x"]) {
    const filter = keyFilter([key]);
    t.is(bitsSet(filter), 10, `${key}: ten probes in a 64-bit filter never collide (the second hash is odd)`);
    t.true(mayHoldKey(filter, key));
    t.true(mayHoldHashed(filter, keyHashes(key)));
  }
});
