// The policy cache file on disk: what is written reads back, a missing file is no cache, and anything else that is not a version-1 cache is an error with the reason.
import test from "ava";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readPolicyCache, writePolicyCache } from "../../extproc/policy-source/cache-file.js";

function dir(t: { teardown(fn: () => void): void }): string {
  const d = mkdtempSync(join(tmpdir(), "meshext-cache-"));
  t.teardown(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

const cache = { savedAt: "2026-12-03T10:00:00.000Z", controlPlane: "http://cp:5681", mesh: "default", items: [{ type: "MeshTrafficPermission", name: "a", mesh: "default", spec: {} }] };

test("policy cache › given a written cache, when read, then it is what was written, as version 1, in one JSON document ending with a newline", async (t) => {
  const file = join(dir(t), "sub", "cache.json");
  await writePolicyCache(file, cache);
  t.deepEqual(await readPolicyCache(file), { version: 1, ...cache });
  const text = readFileSync(file, "utf8");
  t.true(text.endsWith("}\n"), JSON.stringify(text.slice(-5)));
  t.deepEqual(JSON.parse(text), { version: 1, ...cache });
});

test("policy cache › given no file, when read, then there is no cache; given a directory in its place, then the read fails with the reason", async (t) => {
  const d = dir(t);
  t.is(await readPolicyCache(join(d, "none.json")), undefined);
  mkdirSync(join(d, "a-dir"));
  await t.throwsAsync(readPolicyCache(join(d, "a-dir")), { code: "EISDIR" });
});

test("policy cache › given a file of another version, without items, or not JSON, when read, then it is refused", async (t) => {
  const d = dir(t);
  const write = (name: string, text: string) => (writeFileSync(join(d, name), text), join(d, name));
  for (const [name, doc] of [["v2.json", { version: 2, items: [] }], ["no-items.json", { version: 1 }], ["object-items.json", { version: 1, items: {} }], ["none.json", {}]] as const) {
    await t.throwsAsync(readPolicyCache(write(name, JSON.stringify(doc))), { message: "not a meshext policy cache (version 1)" }, name);
  }
  t.deepEqual(await readPolicyCache(write("empty-items.json", '{"version":1,"items":[]}')), { version: 1, items: [] });
  await t.throwsAsync(readPolicyCache(write("text.json", "not json")), { instanceOf: SyntaxError });
});
