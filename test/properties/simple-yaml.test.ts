// simple-yaml › the fast reader of plain YAML gives exactly what the yaml library gives, or declines: on random
// values written by the library (both sequence indentations) and on those texts with random edits.
import test from "ava";
import fc from "fast-check";
import { parseAllDocuments, stringify } from "yaml";
import { simpleYamlDocuments } from "../../extproc/policy/documents/simple-yaml.js";
import { budget, yamlish } from "./budget.js";

const KEYS = ["type", "name", "mesh", "spec", "from", "targetRef", "kind", "default", "action", "kuma.io/service", "a_b", "x-y", "true", "null", "1", "on"];
const SCALARS = ["Allow", "Deny", "backend", "svc-1", "1ms", "10s", "5m", "1h", "0x1f", "0o7", "1e5", "1.5", ".inf", ".5", "007", "-1", "-0", "+1", "0", "42", "123456789012345678", "true", "True", "FALSE", "null", "~", "yes", "no", "a:b", "http://x/y", "a b", "a  b", "/api", "-x", "x-", "a---b", "[x]", "{}", "[]", "a,b", "", " x", "x ", "a: b", "a:", "#x", "a #b", "é", "1d", "2s3", "'q'", '"q"', "it's", 'say "x"'];

/** Scalars every one of which the fast path reads. */
const PLAIN = ["Allow", "backend", "svc-1", "1ms", "10s", "a:b", "a b", "/api", "1", "true", "null", "a: b", " x", "[x]", 0, 42, -7, true, false, null, [], {}];

const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: "small" }, tie("leaf"), tie("map"), tie("list")),
  leaf: fc.oneof({ arbitrary: fc.constantFrom(...PLAIN), weight: 6 }, fc.constantFrom(...SCALARS), fc.integer(), fc.boolean(), fc.constant(null), fc.double()),
  map: fc.dictionary(fc.constantFrom(...KEYS), tie("node"), { maxKeys: 4 }),
  list: fc.array(tie("node"), { maxLength: 3 }),
})).node;

const texts = fc.tuple(fc.array(value, { minLength: 1, maxLength: 3 }), fc.boolean()).map(([docs, indentSeq]) => docs.map((d) => stringify(d, { indentSeq })).join("---\n"));

/** A random edit of a text: a slice replaced by YAML-looking noise. */
const edited = fc.tuple(texts, fc.nat(), fc.nat(6), yamlish).map(([text, at, len, noise]) => {
  const i = at % (text.length + 1);
  return text.slice(0, i) + noise.slice(0, 8) + text.slice(i + len);
});

function library(text: string): unknown[] | "error" {
  const docs = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: false });
  const list = Array.isArray(docs) ? docs : [docs];
  if (list.some((d) => d.errors.length > 0)) return "error";
  return list.map((d) => d.toJS()).filter((v) => v !== null && v !== undefined);
}

function agrees(text: string): boolean {
  const fast = simpleYamlDocuments(text);
  if (fast === undefined) return true;
  const lib = library(text);
  if (lib === "error") return false;
  return JSON.stringify(fast.filter((v) => v !== null)) === JSON.stringify(lib);
}

test("simple-yaml › given values the library wrote, when read fast, then the values are the library's (or it declines)", (t) => {
  let taken = 0;
  fc.assert(fc.property(texts, (text) => {
    if (simpleYamlDocuments(text) !== undefined) taken++;
    return agrees(text);
  }), budget(400));
  t.true(taken > 10, `the fast path read only ${taken} texts`);
});

const PLAIN_KEYS = ["type", "name", "spec", "from", "kuma.io/service", "a_b", "x-y"];
const plainValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: "small" }, tie("leaf"), tie("map"), tie("list")),
  leaf: fc.constantFrom(...PLAIN).map((v) => structuredClone(v)), // a shared [] would be written as an alias
  map: fc.dictionary(fc.constantFrom(...PLAIN_KEYS), tie("node"), { minKeys: 1, maxKeys: 4 }),
  // `- - x` (a list right in a list) is left to the library.
  list: fc.array(fc.oneof(tie("leaf"), tie("map")), { minLength: 1, maxLength: 3 }),
})).node;
const plainTexts = fc.tuple(fc.array(fc.oneof(fc.dictionary(fc.constantFrom(...PLAIN_KEYS), plainValue, { minKeys: 1, maxKeys: 4 }), fc.array(plainValue.filter((v) => !Array.isArray(v)), { minLength: 1, maxLength: 3 })), { minLength: 1, maxLength: 3 }), fc.boolean());

test("simple-yaml › given plain values the library wrote, when read fast, then every one is read and equals the library's", (t) => {
  fc.assert(fc.property(plainTexts, ([docs, indentSeq]) => {
    const text = docs.map((d) => stringify(d, { indentSeq })).join("---\n");
    return simpleYamlDocuments(text) !== undefined && agrees(text);
  }), budget(400));
  t.pass();
});

test("simple-yaml › given edited texts, when read fast, then it agrees with the library or declines", (t) => {
  fc.assert(fc.property(edited, agrees), budget(1500));
  t.pass();
});

test("simple-yaml › given a generated policy file, when read fast, then it is read (not declined)", (t) => {
  const doc = { type: "MeshFaultInjection", name: "mfi-1", mesh: "default", spec: { targetRef: { kind: "MeshService", name: "backend" }, from: [{ targetRef: { kind: "Mesh" }, default: { http: [{ delay: { value: "1ms", percentage: 1 } }] } }] } };
  const text = [doc, doc].map((d) => stringify(d)).join("---\n");
  t.deepEqual(simpleYamlDocuments(text), [doc, doc]);
});

test("simple-yaml › given nesting deeper than its bound (by indentation or by sequences at their key's indent), when read fast, then it declines", (t) => {
  const byIndent = Array.from({ length: 40 }, (_, i) => `${" ".repeat(i * 2)}a:`).join("\n") + " x\n";
  const atOneIndent = Array.from({ length: 40 }, (_, i) => `${" ".repeat(i * 2)}a:\n${" ".repeat(i * 2)}- b:`).join("\n");
  t.is(simpleYamlDocuments(byIndent), undefined);
  t.is(simpleYamlDocuments(atOneIndent), undefined);
});
