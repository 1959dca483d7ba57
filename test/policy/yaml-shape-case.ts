// The macro the yaml-limits scan tests share: a small text's depths and entry count as the pre-parse scan gives them.
import test from "ava";
import { yamlShape } from "../../extproc/policy/documents/yaml-limits.js";

/** A macro whose tests scan a text without limits and expect `expected`; titled `<prefix> › "<text>" <title>`. */
export function shapeMacro(prefix: string) {
  return test.macro({
    exec(t, text: string, expected: { flowDepth: number; blockDepth: number; nodes: number }) {
      // Given a small text; when scanned without limits; then these depths and entry count
      t.deepEqual(yamlShape(text), expected);
    },
    title: (provided = "", text: string) => `${prefix} › ${JSON.stringify(text)} ${provided}`,
  });
}
