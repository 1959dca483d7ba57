// Hostile request bodies get a clear 4xx problem body, never a crash or a hang, and the server keeps serving.
import test from "ava";
import { ApiError } from "../../extproc/control-plane/problems.js";
import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import { type BodyLimits, decodeUtf8, DEFAULT_BODY_LIMITS, parseYamlSafe, readBodyLimited } from "../../extproc/control-plane/safety.js";
import { call, mtp, startTestControlPlane, tempDir } from "./helpers.js";

const PATH = "/meshes/default/meshtrafficpermissions/p";

const BILLION_LAUGHS = [
  "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]",
  "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]",
  "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]",
  "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]",
  "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]",
  "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]",
  "type: MeshTrafficPermission",
  "name: p",
].join("\n");

const deepBlock = (levels: number) => Array.from({ length: levels }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n") + " x\n";

/** `later`: refused after parsing (by UTF-8 decoding or resource validation), not by parseYamlSafe. */
const BAD_INPUTS: Array<{ what: string; body: string | Buffer; expect: RegExp; later?: true }> = [
  { what: "YAML alias bomb", body: BILLION_LAUGHS, expect: /alias/i },
  { what: "a single YAML alias", body: "type: MeshTrafficPermission\nname: &n p\nmesh: *n\n", expect: /alias/i },
  { what: "deep flow nesting", body: "type: MeshTrafficPermission\nname: p\nspec: " + "[".repeat(100_000) + "]".repeat(100_000), expect: /nests deeper/ },
  { what: "deep block nesting", body: deepBlock(200), expect: /nests deeper/ },
  { what: "a huge document (too many nodes, one per line)", body: "type: MeshTrafficPermission\nname: p\nlabels:\n" + Array.from({ length: 30_000 }, (_, i) => `  k${i}: v`).join("\n"), expect: /more than \d+ nodes/ },
  { what: "a huge document (too many nodes, one line)", body: JSON.stringify({ ...mtp("p"), labels: Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`k${i}`, "v"])) }), expect: /more than \d+ nodes/ },
  { what: "non-UTF-8 bytes", body: Buffer.from([0x74, 0x79, 0x70, 0x65, 0x3a, 0x20, 0xff, 0xfe, 0x0a]), expect: /UTF-8/, later: true },
  { what: "several YAML documents", body: "type: MeshTrafficPermission\nname: p\n---\ntype: MeshTrafficPermission\nname: q\n", expect: /not valid YAML/ },
  { what: "broken YAML", body: "type: [unclosed\n", expect: /not valid YAML/ },
  { what: "duplicate keys", body: "type: MeshTrafficPermission\nname: p\nname: q\n", expect: /not valid YAML/ },
  { what: "an empty body", body: "", expect: /empty/ },
  { what: "a scalar instead of a resource", body: "42", expect: /Resource is not valid|mapping/, later: true },
];

for (const c of BAD_INPUTS) {
  // Promptness is the parser's own time: a request's wall time also counts the other tests sharing the machine.
  if (!c.later) test(`safety › given ${c.what}, when parsed, then it is refused within 2 s of CPU time`, (t) => {
    const text = c.body as string;
    const started = process.cpuUsage();
    t.throws(() => parseYamlSafe(text), { instanceOf: ApiError });
    const used = process.cpuUsage(started);
    t.true((used.user + used.system) / 1000 < 2000, `${(used.user + used.system) / 1000} ms of CPU`);
  });

  test(`safety › ${c.what} is rejected with 400 and a clear message`, async (t) => {
    const dir = await tempDir();
    const cp = await startTestControlPlane(dir.path);
    t.teardown(async () => {
      await cp.stop();
      await dir.remove();
    });
    const res = await call(cp.url, "PUT", PATH, c.body, { "content-type": "application/yaml" });
    t.is(res.status, 400, JSON.stringify(res.body));
    t.regex(`${res.body.detail} ${JSON.stringify(res.body.invalid_parameters ?? [])}`, c.expect);
    t.is((await call(cp.url, "GET", "/")).status, 200, "server still serving");
    t.is((await call(cp.url, "GET", PATH)).status, 404, "nothing stored");
  });
}

test("safety › a body over the size limit is refused with 413 without reading it all", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path, { limits: { maxBodyBytes: 64 * 1024 } });
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const huge = "x".repeat(5 * 1024 * 1024);
  const res = await fetch(cp.url + PATH, { method: "PUT", body: huge }).then(
    async (r) => ({ status: r.status, body: (await r.json()) as { detail: string } }),
    () => ({ status: 0, body: { detail: "connection closed" } }),
  );
  // Node may see the socket closed before it reads the 413; either way the upload was cut short.
  t.true(res.status === 413 || res.status === 0, `status ${res.status}`);
  if (res.status === 413) t.regex(res.body.detail, /larger than 65536 bytes/);
  t.is((await call(cp.url, "GET", "/")).status, 200, "server still serving");
});

// The guards on their own: parseYamlSafe under small limits, decodeUtf8, readBodyLimited on a stand-in request.

const SMALL: BodyLimits = { maxBodyBytes: 1000, maxDepth: 2, maxNodes: 6, maxYamlNodes: 4 };
const refusal = (text: string, limits: BodyLimits = SMALL) => {
  try {
    return { value: parseYamlSafe(text, limits) };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { status: err.status, detail: err.detail };
  }
};

test("safety › given no limits passed, then the defaults are the documented 1 MiB body, 64 levels, 10 000 JSON nodes and 2 500 YAML nodes", (t) => {
  t.deepEqual(DEFAULT_BODY_LIMITS, { maxBodyBytes: 1 << 20, maxDepth: 64, maxNodes: 10_000, maxYamlNodes: 2500 });
  const json = (n: number) => JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])));
  t.is(Object.keys(parseYamlSafe(json(9999)) as object).length, 9999, "the object and 9 999 values: 10 000 nodes");
  t.deepEqual(refusal(json(10_000), DEFAULT_BODY_LIMITS), { status: 400, detail: "document has more than 10000 nodes" });
  const nested = (levels: number) => "[".repeat(levels) + "]".repeat(levels);
  t.deepEqual(refusal(`{"a":${nested(64)}}`, DEFAULT_BODY_LIMITS), { value: { a: JSON.parse(nested(64)) } });
  t.deepEqual(refusal(`{"a":${nested(65)}}`, DEFAULT_BODY_LIMITS), { status: 400, detail: "document nests deeper than 64 levels" });
  t.deepEqual(refusal("a: [" + Array.from({ length: 3000 }, (_, i) => i).join(", ") + "]", DEFAULT_BODY_LIMITS), { status: 400, detail: "document has more than 2500 nodes" });
});

test("safety › given JSON objects, when parsed, then each node counts once, the limit itself is accepted, and nulls and arrays are walked", (t) => {
  t.deepEqual(refusal('{"a":1,"b":2,"c":3,"d":4,"e":5}'), { value: { a: 1, b: 2, c: 3, d: 4, e: 5 } });
  t.deepEqual(refusal('{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}'), { status: 400, detail: "document has more than 6 nodes" });
  t.deepEqual(refusal('{"a":[1,2,3,4,5]}'), { status: 400, detail: "document has more than 6 nodes" });
  t.deepEqual(refusal('{"a":{"b":{"c":1}}}'), { value: { a: { b: { c: 1 } } } });
  t.deepEqual(refusal('{"a":{"b":{"c":{}}}}'), { status: 400, detail: "document nests deeper than 2 levels" });
  t.deepEqual(refusal('{"a":[[1]]}'), { value: { a: [[1]] } });
  t.deepEqual(refusal('{"a":[[[1]]]}'), { status: 400, detail: "document nests deeper than 2 levels" });
  t.deepEqual(refusal('{"a":null,"b":"x"}'), { value: { a: null, b: "x" } });
});

test("safety › given a body starting with `{` after whitespace, then it is read as JSON (its node limit, its duplicate keys); anything else goes to the YAML parser", (t) => {
  // Five values: within the JSON limit of 6 nodes, beyond the YAML limit of 4.
  t.deepEqual(refusal('\n  \t{"a":1,"b":2,"c":3,"d":4,"e":5}'), { value: { a: 1, b: 2, c: 3, d: 4, e: 5 } });
  t.deepEqual(refusal('{"a":1,"a":2}'), { value: { a: 2 } }, "JSON.parse keeps the last of repeated keys");
  t.deepEqual(refusal("[{}, 1, 2, 3]"), { status: 400, detail: "document has more than 4 nodes" }, "a JSON array is YAML's");
  t.deepEqual(refusal("x {}"), { value: "x {}" });
  t.deepEqual(refusal("{a: 1, b: 2}"), { value: { a: 1, b: 2 } }, "not JSON: read as a YAML flow mapping");
});

test("safety › given YAML, when it is over the limits, then the YAML node limit is the smaller of the two and the parsed value is measured too", (t) => {
  t.deepEqual(refusal("a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6"), { status: 400, detail: "document has more than 4 nodes" });
  const fewerJson = { ...SMALL, maxNodes: 3, maxYamlNodes: 100 };
  t.deepEqual(refusal("a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6", fewerJson), { status: 400, detail: "document has more than 3 nodes" });
  t.deepEqual(refusal("a: 1\nb: 2\nc: 3", fewerJson), { status: 400, detail: "document has more than 3 nodes" }, "the scan lets it through; the value has 4 nodes");
  t.deepEqual(refusal("a: 1\nb: 2", fewerJson), { value: { a: 1, b: 2 } });
  t.deepEqual(refusal("a: null"), { value: { a: null } });
});

test("safety › given an empty or blank body, then 400 says it is empty", (t) => {
  for (const text of ["", "  \n\t "]) t.deepEqual(refusal(text), { status: 400, detail: "request body is empty: expected a YAML or JSON resource" });
});

test("safety › given invalid YAML or several documents, then 400 names the parser's first error", (t) => {
  t.deepEqual(refusal("a: 1\n---\nb: 2"), { status: 400, detail: "request body is not valid YAML or JSON: Source contains multiple documents; please use YAML.parseAllDocuments()" });
  // Invalid YAML whose error recovery nests deeper than the pre-parse scan sees: the bounded parser stops it.
  t.deepEqual(refusal('  ? \n  "a:   ? \n'.repeat(200), DEFAULT_BODY_LIMITS), { status: 400, detail: "request body is not valid YAML or JSON: nests deeper than 64 levels" });
  const broken = refusal("type: [unclosed");
  t.is(broken.status, 400);
  t.true(broken.detail?.startsWith("request body is not valid YAML or JSON: Flow sequence"), broken.detail);
});

test("safety › given a YAML 1.1 document whose value the parser cannot build (a merge key of a scalar), then 400 says the body could not be read", (t) => {
  // `%YAML 1.1` turns on merge keys: the document parses, and building its value throws
  t.deepEqual(refusal("%YAML 1.1\n---\na:\n  <<: 5\n", DEFAULT_BODY_LIMITS), { status: 400, detail: "request body could not be read: Merge sources must be maps or map aliases" });
  t.deepEqual(refusal("%YAML 1.1\n---\na:\n  <<: {b: 1}\n", DEFAULT_BODY_LIMITS), { value: { a: { b: 1 } } }, "a merge of a map is read");
});

test("safety › given repeated keys in any YAML mapping, then 400 names the repeated key; keys repeated only across mappings are fine", (t) => {
  const dup = (k: string) => ({ status: 400, detail: `request body is not valid YAML or JSON: map keys must be unique (${JSON.stringify(k)} repeats)` });
  t.deepEqual(refusal("a: 1\nb: 2\na: 3", DEFAULT_BODY_LIMITS), dup("a"));
  t.deepEqual(refusal("x: {}\nspec:\n  a: 1\n  a: 2", DEFAULT_BODY_LIMITS), dup("a"));
  t.deepEqual(refusal("1: a\n'1': b", DEFAULT_BODY_LIMITS), dup("1"));
  t.deepEqual(refusal("? [a]\n: 1\n? [a]\n: 2\n", DEFAULT_BODY_LIMITS), dup('["a"]'));
  t.deepEqual(refusal("a:\n  k: 1\nb:\n  k: 2", DEFAULT_BODY_LIMITS), { value: { a: { k: 1 }, b: { k: 2 } } });
});

test("safety › given YAML aliases anywhere, then 400 says aliases are not accepted; an anchor alone is harmless", (t) => {
  const alias = { status: 400, detail: "YAML aliases (*name) are not accepted in resources" };
  t.deepEqual(refusal("a: &x 1\nb: *x", DEFAULT_BODY_LIMITS), alias);
  t.deepEqual(refusal("a: &x 1\nb:\n  - c\n  - *x", DEFAULT_BODY_LIMITS), alias);
  t.deepEqual(refusal("a: &x 1", DEFAULT_BODY_LIMITS), { value: { a: 1 } });
});

test("safety › given request bytes, when decoded, then strict UTF-8 is read with a leading BOM dropped and invalid bytes refused with 400", (t) => {
  t.is(decodeUtf8(Buffer.from("\uFEFFname: é", "utf8")), "name: é");
  t.is(decodeUtf8(Buffer.from([])), "");
  const err = t.throws(() => decodeUtf8(Buffer.from([0x61, 0xc3, 0x28])), { instanceOf: ApiError });
  t.is(err?.status, 400);
  t.is(err?.detail, "request body is not valid UTF-8");
});

/** A stand-in for an IncomingMessage still arriving: a stream with the given headers that the test writes to. */
function bodyStream(headers: Record<string, string> = {}): IncomingMessage & PassThrough {
  return Object.assign(new PassThrough(), { headers }) as unknown as IncomingMessage & PassThrough;
}

/** A stand-in for an IncomingMessage: a stream of `chunks` with the given headers. */
function request(chunks: string[], headers: Record<string, string> = {}) {
  const req = bodyStream(headers);
  for (const c of chunks) req.write(c);
  req.end();
  return req;
}

test("safety › given a body within the limit, when read, then every chunk comes back in order, up to exactly the limit", async (t) => {
  t.is((await readBodyLimited(request(["abc", "def", "ghij"]), 10)).toString(), "abcdefghij");
  t.is((await readBodyLimited(request(["abc"], { "content-length": "10" }), 10)).toString(), "abc");
  t.is((await readBodyLimited(request([]), 0)).length, 0);
});

test("safety › given a body over the limit, when read, then it fails 413 naming the limit, at once when Content-Length says so", async (t) => {
  const tooBig = (await t.throwsAsync(readBodyLimited(request(["abcdef", "ghijk"]), 10))) as unknown as ApiError;
  t.is(tooBig.status, 413);
  t.is(tooBig.detail, "request body is larger than 10 bytes");
  const declared = bodyStream({ "content-length": "11" });
  const early = (await t.throwsAsync(readBodyLimited(declared, 10))) as unknown as ApiError;
  t.is(early.status, 413);
  t.is(early.detail, "request body is larger than 10 bytes");
  t.is(declared.listenerCount("data"), 0, "nothing was read");
});

test("safety › given a body over the limit arriving in chunks, when the limit is passed, then reading stops", async (t) => {
  const req = bodyStream({});
  const read = readBodyLimited(req, 4);
  req.write("abc");
  req.write("de");
  await t.throwsAsync(read);
  t.is(req.listenerCount("data"), 0, "no longer reading");
});

test("safety › given a request that errors while its body is read, then reading fails with that error", async (t) => {
  const req = bodyStream({});
  const read = readBodyLimited(req, 100);
  req.write("ab");
  req.destroy(new Error("connection reset"));
  await t.throwsAsync(read, { message: "connection reset" });
});
