// compact detach nothing › in a parse worker (detachNothing), intern hands strings back as they are: no copy is made.
import test from "ava";
import v8 from "node:v8";
import vm from "node:vm";
import { detachNothing, StringTable } from "../../extproc/policy/documents/compact.js";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

function heapUsed(): number {
  gc();
  return v8.getHeapStatistics().used_heap_size;
}

test("compact detach nothing › given detachNothing, when a 16 MB string is interned, then no second 16 MB is allocated", (t) => {
  // Given a parse worker's setting, and a 16 MB string already in memory
  detachNothing();
  const big = `${"w".repeat(16 << 20)}x`;
  const strings = new StringTable();
  const before = heapUsed();
  // When it is interned (twice) and the results held
  const held = [strings.intern(big), strings.intern(big)];
  const grown = heapUsed() - before;
  // Then both are the string, and the heap did not grow by a copy of it
  t.true(held.every((s) => s === big));
  t.true(grown < 4 << 20, `grew ${grown} bytes`);
});
