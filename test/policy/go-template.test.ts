// MeshIdentity's SPIFFE templates are checked as Go's text/template parser (with Kuma's `label` function) checks
// them: what parses is accepted, and a mistake gets the error text Go gives, as Kuma's validator reports it.
import test from "ava";
import { goTemplateError } from "../../extproc/policy/documents/go-template.js";

test("go template › given the templates Kuma documents and uses by default, when checked, then they parse", (t) => {
  for (const text of [
    "{{ .Mesh }}.{{ .Zone }}.mesh.local",
    "/ns/{{ .Namespace }}/sa/{{ .ServiceAccount }}",
    "/workload/{{ .Workload }}",
    '/workload/{{ label "kuma.io/workload" }}',
    '{{- .Mesh -}}.{{ .Zone | printf "%s" }}',
    "{{ if .Zone }}{{ .Zone }}{{ else }}local{{ end }}.mesh.local",
    "{{/* a comment */}}plain.mesh.local",
    "{ .Zone|2 }.not-an-action",
  ]) {
    t.is(goTemplateError(text), undefined, text);
  }
});

test("go template › given broken templates, when checked, then each gets Go's parse error with its line", (t) => {
  const cases: Array<[string, string]> = [
    ["{{ .Mesh|1 }}.mesh.local", "template: :1: non executable command in pipeline stage 2"],
    ["/ns/{{ .Namespace", "template: :1: unclosed action"],
    ['{{ label "app }}', "template: :1: unterminated quoted string"],
    ["{{ nope .Namespace }}", 'template: :1: function "nope" not defined'],
    ["{{ }}", "template: :1: missing value for command"],
    ["a\n{{ end }}", "template: :2: unexpected {{end}}"],
    ["{{ if .Zone }}x", "template: :1: unexpected EOF"],
  ];
  for (const [text, error] of cases) t.is(goTemplateError(text), error, text);
});

test("go template › given trim markers, comments, quoted and raw strings holding }}, and pipelines, when checked, then they parse", (t) => {
  // Given templates Go's text/template parses; when checked; then no error
  const texts = [
    "{{- if .A -}}x{{- else -}}y{{- end -}}",
    "{{/* note */}}",
    "{{- /* note */ -}}",
    "{{ print `a}}b` }}",
    '{{ print "a}}b" }}',
    '{{ print "a\\"}}" }}',
    "{{ print `x` `y` }}",
    "{{ .A | .B }}",
    "{{ .A | print | len }}",
    "{{ print (len .A) }}",
    "{{ if .A }}{{ else if .B }}{{ end }}",
    "{{ with .A }}{{ else with .B }}{{ end }}",
    "{{print .A}}{{print\t.B}}",
  ];
  for (const text of texts) t.is(goTemplateError(text), undefined, text);
});

test("go template › given more broken templates, when checked, then each gets Go's parse error with its line", (t) => {
  // Given templates Go rejects; when checked; then Go's message and the action's line
  const cases: Array<[string, string]> = [
    ["{{}}", "template: :1: missing value for command"],
    ["{{/* note }}", "template: :1: unclosed comment"],
    ['{{ print "a\nb" }}', "template: :1: unterminated quoted string"],
    ["{{ | .A }}", 'template: :1: unexpected "|" in command'],
    ["{{ .A | print | nope }}", 'template: :1: function "nope" not defined'],
    ["{{ .A }}\n{{ .B | 3 }}", "template: :2: non executable command in pipeline stage 2"],
    ["{{ else }}", "template: :1: unexpected {{else}}"],
  ];
  for (const [text, error] of cases) t.is(goTemplateError(text), error, text);
});
