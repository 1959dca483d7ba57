// go template branches › {{break}} and {{continue}} parse only in a range's body, and {{else}} only once per if, with
// or range, as Go's parser reads them (text/template/parse/parse.go: breakControl, parseControl, parseDefinition).
import test from "ava";
import { goTemplateError } from "../../extproc/policy/documents/go-template.js";
import { accepts } from "./go-template-cases.js";

test("go template branches › given break or continue outside any range, then Go's '{{break}} outside {{range}}'", (t) => {
  // Given each keyword at the top, after a closed range, and in an if; when checked; then Go's error on its line
  for (const k of ["break", "continue"]) {
    t.is(goTemplateError(`{{ ${k} }}`), `template: :1: {{${k}}} outside {{range}}`);
    t.is(goTemplateError(`{{ range .A }}{{ end }}\n{{${k}}}`), `template: :2: {{${k}}} outside {{range}}`);
    t.is(goTemplateError(`{{ if .A }}{{ ${k} }}{{ end }}`), `template: :1: {{${k}}} outside {{range}}`);
  }
});

test("go template branches › given break or continue in a range's else, or in a define or block, then outside {{range}}", (t) => {
  // Given the keyword after a range's else, in a block's body within a range, and in a define; when checked; then not in a range body
  t.is(goTemplateError("{{ range .A }}x{{ else }}{{ break }}{{ end }}"), "template: :1: {{break}} outside {{range}}");
  t.is(goTemplateError('{{ range .A }}{{ block "x" . }}{{ continue }}{{ end }}{{ end }}'), "template: :1: {{continue}} outside {{range}}");
  t.is(goTemplateError('{{ define "x" }}{{ break }}{{ end }}'), "template: :1: {{break}} outside {{range}}");
});

test("go template branches › given break or continue in a range's body, also nested in an if or in an inner range's else, then they parse", (t) => {
  // Given the keyword in an if and its else inside a range, in a range inside another's else, in a with inside a range,
  // and in an inner range's else (the outer range's body); when checked; then no error
  accepts(t, [
    "{{ range .A }}{{ if .B }}{{ break }}{{ else }}{{ continue }}{{ end }}{{ end }}",
    "{{ range .A }}x{{ else }}{{ range .B }}{{ continue }}{{ end }}{{ end }}",
    "{{ range .A }}{{ with .B }}{{ range .C }}{{ end }}{{ break }}{{ end }}{{ end }}",
    "{{ range .A }}{{ range .B }}x{{ else }}{{ break }}{{ end }}{{ end }}",
  ]);
});

test("go template branches › given a second {{else}} after a plain one, then Go's 'expected end; found {{else}}'", (t) => {
  // Given two plain elses in an if, a with and a range, and an else-if after a plain else; when checked; then Go's error
  for (const text of ["{{ if .A }}a{{ else }}b{{ else }}c{{ end }}", "{{ with .A }}a{{ else }}b{{ else }}c{{ end }}",
    "{{ range .A }}a{{ else }}b{{ else }}c{{ end }}", "{{ if .A }}a{{ else }}b{{ else if .C }}c{{ end }}"]) {
    t.is(goTemplateError(text), "template: :1: expected end; found {{else}}", text);
  }
});

test("go template branches › given else-if and else-with chains ending in one plain {{else}}, then they parse", (t) => {
  // Given chains of else if / else with and a last else; when checked; then no error
  accepts(t, ["{{ if .A }}a{{ else if .B }}b{{ else if .C }}c{{ else }}d{{ end }}", "{{ with .A }}a{{ else with .B }}b{{ else }}c{{ end }}",
    "{{ range .A }}a{{ else }}b{{ end }}x"]);
});

test("go template branches › given {{else}} in a define's or a block's body, then Go's 'unexpected {{else}} in' its clause", (t) => {
  // Given a define and a block with an else; when checked; then Go names the clause
  t.is(goTemplateError('{{ define "x" }}a{{ else }}b{{ end }}'), "template: :1: unexpected {{else}} in define clause");
  t.is(goTemplateError('{{ block "x" . }}a{{ else }}b{{ end }}'), "template: :1: unexpected {{else}} in block clause");
});
