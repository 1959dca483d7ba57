// headers › Envoy's HeaderMap read as a lazily decoded map: lower-cased keys, repeats joined, raw_value first.
import test from "ava";
import type { HeaderValue } from "../../extproc/gen/envoy/config/core/v3/base.js";
import { headerMapToMap, headerValue } from "../../extproc/transport/headers.js";

const raw = (key: string, value: string): HeaderValue => ({ key, value: "", rawValue: Buffer.from(value, "utf8") });
const legacy = (key: string, value: string): HeaderValue => ({ key, value, rawValue: Buffer.alloc(0) });

test("headers › given raw_value and the legacy value, then raw_value wins; without raw_value the legacy value is used", (t) => {
  t.is(headerValue({ key: "a", value: "old", rawValue: Buffer.from("new") }), "new");
  t.is(headerValue(legacy("a", "old")), "old");
});

test("headers › given UTF-8 and long values, then they decode like Buffer#toString", (t) => {
  for (const value of ["ascii", "grüße", "日本", "x".repeat(65), `${"y".repeat(70)}é`, ""]) t.is(headerValue(raw("k", value)), value);
});

test("headers › given repeated headers, when read, then they are joined in arrival order (cookie with '; ')", (t) => {
  const map = headerMapToMap({ headers: [raw("x-a", "1"), raw("cookie", "a=1"), raw("X-A", "2"), raw("cookie", "b=2")] });
  t.is(map.get("x-a"), "1,2");
  t.is(map.get("cookie"), "a=1; b=2");
  t.true(map.has("x-a"));
  t.false(map.has("x-b"));
  t.is(map.get("x-b"), undefined);
});

test("headers › given mixed-case keys, then lookups use lower case and iteration shows lower-cased keys", (t) => {
  const map = headerMapToMap({ headers: [raw("Content-Type", "text/plain"), raw(":path", "/p"), raw("x-a", "1"), raw("X-A", "2")] });
  t.is(map.get("content-type"), "text/plain");
  t.is(map.get("Content-Type"), undefined);
  t.is(map.size, 3);
  t.deepEqual([...map], [["content-type", "text/plain"], [":path", "/p"], ["x-a", "1,2"]]);
  t.deepEqual([...map.keys()], ["content-type", ":path", "x-a"]);
  t.deepEqual([...map.values()], ["text/plain", "/p", "1,2"]);
  const seen: string[] = [];
  map.forEach((value, key) => seen.push(`${key}=${value}`));
  t.deepEqual(seen, ["content-type=text/plain", ":path=/p", "x-a=1,2"]);
  t.is(map.get("x-a"), "1,2"); // still right once the whole map has been built
});

test("headers › given no header map, then the map is empty", (t) => {
  const map = headerMapToMap(undefined);
  t.is(map.size, 0);
  t.is(map.get(":path"), undefined);
});
