// go template words › every builtin function Go's text/template knows (and Kuma's label) parses as a command, a name
// that merely resembles one does not, and each keyword is read as Go reads it (openers need an end, the others not).
import test from "ava";
import { goTemplateError } from "../../extproc/policy/documents/go-template.js";

const BUILTINS = ["and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf", "println", "urlquery", "eq", "ge", "gt", "le", "lt", "ne", "label"];

test("go template words › given each builtin function as a command, then it parses", (t) => {
  // Given `{{ fn .Zone }}` for each builtin; when checked; then no error
  for (const fn of BUILTINS) t.is(goTemplateError(`{{ ${fn} .Zone }}.mesh`), undefined, fn);
});

test("go template words › given a name one letter off a builtin, then Go's 'not defined'", (t) => {
  // Given names that are not builtins; when checked; then each is named in the error
  for (const fn of ["lens", "prin", "Label", "urlquote", "eqq", "x"]) t.is(goTemplateError(`{{ ${fn} .Zone }}`), `template: :1: function "${fn}" not defined`, fn);
});

test("go template words › given each opener, then it needs its end; closed, it parses", (t) => {
  // Given if/range/with with a pipeline, and define/block with a name; when left open or closed; then
  for (const opener of ["if .Zone", "range .Zones", "with .Zone", 'define "x"', 'block "x" .']) {
    t.is(goTemplateError(`{{ ${opener} }}a`), "template: :1: unexpected EOF", opener);
    t.is(goTemplateError(`{{ ${opener} }}a{{ end }}`), undefined, opener);
  }
});

test("go template words › given the other keywords where Go takes them, then they parse", (t) => {
  // Given else inside an if, a template call, break/continue inside a range, and the constants; when checked; then no error
  for (const text of ['{{ if .A }}a{{ else }}b{{ end }}', '{{ template "x" }}', "{{ range .Zones }}{{ break }}{{ end }}", "{{ range .Zones }}{{ continue }}{{ end }}", "{{ print nil }}", "{{ if true }}a{{ end }}", "{{ if false }}a{{ end }}"]) {
    t.is(goTemplateError(text), undefined, text);
  }
});
