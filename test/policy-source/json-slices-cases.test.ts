// Examples of the JSON slicer (json-slices.ts): which spaces separate values, and where an unquoted value ends.
import test from "ava";
import { arrayElements, objectMembers } from "../../extproc/policy-source/json-slices.js";

const arrays: Array<{ name: string; text: string; want: string[] | undefined }> = [
  { name: "CRLF line ends between elements (as a Windows tool writes them)", text: "[\r\n  1,\r\n  true\r\n]\r\n", want: ["1", "true"] },
  { name: "tabs between elements", text: "[\t1,\ttrue\t]", want: ["1", "true"] },
  { name: "a space before the comma ends a number", text: "[1 , null]", want: ["1", "null"] },
  { name: "two numbers with only a space between them are not one element", text: "[1 2]", want: undefined },
  { name: "a colon right after a number (not an array's punctuation)", text: "[1:2]", want: undefined },
];
for (const c of arrays) {
  test(`json slices › given an array with ${c.name}, when sliced, then the elements are the values' own text`, (t) => {
    t.deepEqual(arrayElements(c.text), c.want, c.text);
  });
}

const objects: Array<{ name: string; text: string; want: Array<[string, string]> | undefined }> = [
  { name: "CRLF line ends around members", text: '{\r\n"a":\r\n1\r\n,"b":\r\n"x"\r\n}', want: [["a", "1"], ["b", '"x"']] },
  { name: "a space after a number value", text: '{"a": 1 , "b": false }', want: [["a", "1"], ["b", "false"]] },
  { name: "a colon right after a number value", text: '{"a":1:2}', want: undefined },
  { name: "a stray character instead of the comma between members", text: '{"a":1 x"b":2}', want: undefined },
];
for (const c of objects) {
  test(`json slices › given an object with ${c.name}, when sliced, then the members are the values' own text`, (t) => {
    const m = objectMembers(c.text);
    t.deepEqual(m && [...m], c.want, c.text);
  });
}
