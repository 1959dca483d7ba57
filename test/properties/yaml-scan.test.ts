// The YAML pre-scan against the parser it guards: for any text, the parser's stack never grows deeper than
// the scan's flow plus block depth (plus the document and the scalar being read), so any text the scan
// passes parses within the limits; and the bypasses found by probing (a `'` line in a block scalar, quotes,
// comments and brackets inside scalars) are caught, on every YAML input (policies, --policies, inject, --config).
import test from "ava";
import fc from "fast-check";
import { Lexer, parseAllDocuments, Parser } from "yaml";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import { PARSER_STACK_OVERHEAD, parseAllDocumentsBounded, YamlLimitError, yamlLimitViolation, yamlShape } from "../../extproc/policy/documents/yaml-limits.js";
import { budget, yamlish } from "./budget.js";

/** Room for the document node and the scalar being read on top of the collections. */
const STACK_OVERHEAD = PARSER_STACK_OVERHEAD;
/** CPU milliseconds this process spent since `start`: "quickly" measured in work done, not in wall time a busy machine stretches. */
const cpuMsSince = (start: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};

/** The deepest the yaml library's parser stack gets on `text` (the parser fed one lexeme at a time). */
function parserDepth(text: string): number {
  const parser = new Parser();
  let max = 0;
  for (const lexeme of new Lexer().lex(text)) {
    for (const _ of parser.next(lexeme));
    max = Math.max(max, parser.stack.length);
  }
  for (const _ of parser.end());
  return max;
}

const isValidYaml = (text: string) => parseAllDocuments(text, { uniqueKeys: false }).every((d) => d.errors.length === 0);

/** YAML-ish lines with block scalars, quotes and comments mixed into nesting at every indentation. */
const lines = fc
  .array(
    fc.tuple(
      fc.nat({ max: 12 }),
      fc.constantFrom("- ", "- - ", "a: ", "? ", "a:", "[", "{a: [", "]", "}", "'", "''", '"', '\\"', "|", "|-", ">", "|2", "# '", "x'y", "a[b", "&a ", "!t ", "*a", "--- ", "...", "%YAML 1.2", "\t", "b", ", ", ": ", "? a: "),
      fc.constantFrom("", "'", "[", "- ", "x", "|", "#", ": ", "{", "a: "),
    ),
    { maxLength: 60 },
  )
  .map((ls) => ls.map(([indent, a, b]) => " ".repeat(indent) + a + b).join("\n"));
/** A prefix, then one piece repeated: what a probe does to push one nesting trick to depth. */
const nested = fc.oneof(lines, fc.tuple(lines, fc.nat({ max: 30 }), lines).map(([a, n, b]) => a + b.repeat(n)));

test("yaml scan › property: on valid YAML the parser's stack never exceeds the scan's flow + block depth (the scan reads YAML as the parser does)", (t) => {
  let valid = 0;
  fc.assert(
    fc.property(fc.oneof(nested, yamlish, fc.string({ maxLength: 300 })), (text) => {
      if (!isValidYaml(text)) return true;
      valid++;
      const shape = yamlShape(text);
      return parserDepth(text) <= shape.flowDepth + shape.blockDepth + STACK_OVERHEAD;
    }),
    budget(4000, 6000),
  );
  t.true(valid > 100, `${valid} valid samples`);
});

test("yaml scan › property: any input the scan passes parses within the limits (the bounded parser refuses what error recovery nests deeper)", (t) => {
  const limits = { maxDepth: 4 };
  fc.assert(
    fc.property(fc.oneof(nested, yamlish), (text) => {
      if (yamlLimitViolation(text, limits) !== undefined) return true;
      try {
        parseAllDocumentsBounded(text, {}, limits);
      } catch (err) {
        return err instanceof YamlLimitError && !isValidYaml(text);
      }
      return parserDepth(text) <= 2 * limits.maxDepth + STACK_OVERHEAD;
    }),
    budget(3000, 5000),
  );
  t.pass();
});

test("yaml scan › invalid YAML that error recovery nests deeper than the scan sees is refused by the bounded parser, on every input", (t) => {
  // `? ` then a multi-line quoted key: the parser nests one block mapping per repetition at a constant column.
  const text = '  ? \n  "a:   ? \n'.repeat(3000) + '  "a: x\n';
  t.throws(() => parseAllDocumentsBounded(text), { instanceOf: YamlLimitError, message: /nests deeper than 64 levels/ });
  const started = process.cpuUsage();
  t.regex(JSON.stringify(parsePolicyText(text, "p.yaml").rejected), /nests deeper than 64 levels/);
  t.true(cpuMsSince(started) < 1000);
});

/** Deep sequences hidden behind scalar text that looks like structure to a hand-written scan. */
const HIDERS: Record<string, string> = {
  "a `'` line in a literal block scalar": "a: |\n  it's\nb:\n",
  "a `'` line in a folded block scalar": "a: >-\n  '\nb:\n",
  "a `\"` in a block scalar with an indentation indicator": 'a: |2\n   "\nb:\n',
  "a block scalar at the top level": "--- |\n'\n...\n---\nb:\n",
  "a `[` in a block scalar": "a: |\n  [\nb:\n",
  "a quote in a comment": "# it's\nb:\n",
  "an unclosed-looking quote in a plain scalar": "a: don't\nb:\n",
  "a multi-line single-quoted scalar with an escaped quote": "a: 'it''s\n  still'\nb:\n",
};

test("yaml scan › deep nesting after text that looks like an open quote or bracket is still refused", (t) => {
  for (const [what, prefix] of Object.entries(HIDERS)) {
    const text = prefix + "  " + "- ".repeat(2000) + "x\n";
    t.regex(yamlLimitViolation(text) ?? "passed", /nests deeper than 64 levels/, what);
    const started = process.cpuUsage();
    const parsed = parsePolicyText(text, "p.yaml");
    t.true(cpuMsSince(started) < 500, `${what}: refused before the parser`);
    t.regex(JSON.stringify(parsed.rejected), /nests deeper than 64 levels/, what);
  }
});

test("yaml scan › the 400 KB probe body (one `'` line in a block scalar, then deep nesting) is refused within milliseconds", (t) => {
  const body = "type: MeshTrafficPermission\nname: p\nmesh: default\nnote: |\n  '\nspec:\n" + "  " + "- ".repeat(200_000) + "x\n";
  const started = process.cpuUsage();
  t.truthy(yamlLimitViolation(body));
  t.true(cpuMsSince(started) < 200, `${Math.round(cpuMsSince(started))} ms of CPU`);
});

test("yaml scan › block scalars, quotes and comments that hide nothing still pass, with their lines counted", (t) => {
  const text = "a: |\n  it's [ { - \n  more\nb: 'x''y'\n# don't\nc: [1, 2]\n";
  t.is(yamlLimitViolation(text), undefined);
  const shape = yamlShape(text);
  t.true(shape.blockDepth <= 2);
  t.is(shape.flowDepth, 1);
});
