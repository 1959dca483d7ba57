// Properties of the JSON slicer the policy-set reader uses to parse only changed items: on any JSON text it
// either declines (the reader then parses the whole text) or gives slices that JSON.parse reads back into exactly
// what JSON.parse gives for the whole; it accepts every object and array JSON.parse accepts.
import test from "ava";
import fc from "fast-check";
import { arrayElements, objectMembers } from "../../extproc/policy-source/json-slices.js";
import { budget } from "./budget.js";

const parsed = (text: string): { value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
};

/** JSON.parse of every slice, as one object (members) or array (elements); undefined when a slice does not parse. */
function fromMembers(members: Map<string, string>): unknown {
  const out: Record<string, unknown> = {};
  for (const [name, raw] of members) {
    const v = parsed(raw);
    if (!v) return undefined;
    Object.defineProperty(out, name, { value: v.value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
function fromElements(elements: string[]): unknown[] | undefined {
  const out: unknown[] = [];
  for (const raw of elements) {
    const v = parsed(raw);
    if (!v) return undefined;
    out.push(v.value);
  }
  return out;
}

const tricky = fc.constantFrom('"', "\\", '\\"', "{", "}", "[", "]", ",", ":", "\n", "é", "\u2028", "\u0000", " ");
const key = fc.oneof(fc.string({ maxLength: 6 }), tricky, fc.constantFrom("items", "dataplane", "__proto__"));
const value = fc.letrec((tie) => ({
  leaf: fc.oneof(fc.string({ maxLength: 8 }), tricky, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.boolean(), fc.constant(null)),
  node: fc.oneof({ depthSize: "small" }, tie("leaf"), fc.array(tie("node"), { maxLength: 4 }), fc.dictionary(key, tie("node"), { maxKeys: 4 })),
})).node;
/** JSON text of a value, compact or spaced as a server might write it. */
const jsonText = (v: fc.Arbitrary<unknown>) => fc.tuple(v, fc.constantFrom(undefined, 1, 2, "\t")).map(([x, space]) => JSON.stringify(x, null, space));

test("json slices › given any JSON object text, when sliced, then the members parse back to what JSON.parse gives for the whole", (t) => {
  fc.assert(
    fc.property(jsonText(fc.dictionary(key, value, { maxKeys: 5 })), (text) => {
      const members = objectMembers(text);
      t.truthy(members, text);
      t.deepEqual(fromMembers(members!), JSON.parse(text));
    }),
    budget(400),
  );
  t.pass();
});

test("json slices › given any JSON array text, when sliced, then the elements parse back to what JSON.parse gives for the whole", (t) => {
  fc.assert(
    fc.property(jsonText(fc.array(value, { maxLength: 6 })), (text) => {
      const elements = arrayElements(text);
      t.truthy(elements, text);
      t.deepEqual(fromElements(elements!), JSON.parse(text));
    }),
    budget(400),
  );
  t.pass();
});

test("json slices › given a JSON text with one character removed, inserted or changed, when sliced, then it is declined, or its slices all parse only when JSON.parse accepts the whole and agree with it", (t) => {
  const edited = fc
    .tuple(jsonText(fc.oneof(fc.dictionary(key, value, { maxKeys: 4 }), fc.array(value, { maxLength: 4 }))), fc.nat(), fc.constantFrom("", '"', "\\", "{", "}", "[", "]", ",", ":", "1", " ", "x"), fc.boolean())
    .map(([text, at, c, replace]) => {
      const i = at % (text.length + 1);
      return text.slice(0, i) + c + text.slice(replace ? i + 1 : i);
    });
  fc.assert(
    fc.property(edited, (text) => {
      const whole = parsed(text);
      const members = objectMembers(text);
      const fromObject = members && fromMembers(members);
      const elements = arrayElements(text);
      const fromArray = elements && fromElements(elements);
      for (const sliced of [fromObject, fromArray]) {
        if (sliced === undefined) continue;
        t.truthy(whole, `slices parsed but JSON.parse refuses: ${JSON.stringify(text)}`);
        t.deepEqual(sliced, whole!.value);
      }
    }),
    budget(2000),
  );
  t.pass();
});

test("json slices › given texts that are not one object or one array, when sliced, then they are declined", (t) => {
  for (const text of ["", " ", "1", '"items"', "null", "{} {}", "[] []", '{"a":1', '{"a":1,}', '{"a" 1}', "[1,]", "[1 2]", '{"a":[1}', '["]', "{,}", "x{}"]) {
    t.is(objectMembers(text), undefined, `object: ${JSON.stringify(text)}`);
  }
  for (const text of ["", "{}", "[1,]", "[1 2]", "[[]", '["a]', "[] x", "[,1]"]) {
    t.is(arrayElements(text), undefined, `array: ${JSON.stringify(text)}`);
  }
  t.deepEqual(objectMembers(' { "a" : [1, "]"] , "a": {"b":"}"} } '), new Map([["a", '{"b":"}"}']]), "a name given twice: the last, as JSON.parse keeps it");
});
