// go template delimiters › where a comment ends and what a trim marker takes off the action, as Go's lexer reads them
// (text/template/parse/lex.go: lexLeftDelim, lexComment, atRightDelim): a comment's text is never lexed again.
import test from "ava";
import { goTemplateError } from "../../extproc/policy/documents/go-template.js";
import { accepts } from "./go-template-cases.js";

test("go template delimiters › given a comment whose '*/' would overlap its '/*', then Go's 'unclosed comment'", (t) => {
  // Given `{{/*/}}`: the `*` of `/*` is not also the `*` of a `*/`; when checked; then the comment never closes
  t.is(goTemplateError("{{/*/}}"), "template: :1: unclosed comment");
  t.is(goTemplateError("{{- /*/ -}}"), "template: :1: unclosed comment");
});

test("go template delimiters › given a comment holding the start of an action, then its text is skipped, not read as one", (t) => {
  // Given a comment whose last characters open an action with a quote, closed by }} or by -}}; when checked; then it parses
  accepts(t, ['{{/*{{"*/}}', '{{/*{{"*/ -}}', '{{/* {{"*/}}x{{ .Zone }}', '{{- /*{{"*/ -}}']);
});

test("go template delimiters › given a right trim marker, then it is not an operand of the action", (t) => {
  // Given define and if closed with ` -}}`; when checked; then the marker is no part of the pipeline
  t.is(goTemplateError('{{ define "x" -}}a{{ end }}'), undefined);
  t.is(goTemplateError("{{ if -}}x{{ end }}"), "template: :1: missing value for if");
});

test("go template delimiters › given an action closed with }} and no space before it, then its last letter is kept", (t) => {
  // Given `{{end}}`, `{{if .A}}` and a function name right against the delimiter; when checked; then read whole
  t.is(goTemplateError("{{if .A}}a{{end}}"), undefined);
  t.is(goTemplateError("{{nope}}"), 'template: :1: function "nope" not defined');
});
