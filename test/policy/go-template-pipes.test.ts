// go template pipes › a `|` is read as Go's parser reads it (text/template/parse/parse.go: pipeline, command): only after
// a command, one at the very end ignored; an empty `( )` is Go's missing parenthesized pipeline; a block's pipeline is a clause.
import test from "ava";
import { goTemplateError } from "../../extproc/policy/documents/go-template.js";
import { accepts, rejects } from "./go-template-cases.js";

test("go template pipes › given a `|` with no command before it, then Go's 'unexpected \"|\"' in the pipeline's context", (t) => {
  // Given a pipe first in an action, first after if, block or template, and right after another pipe; when checked; then Go's error
  rejects(t, [
    ["{{ | print }}", 'unexpected "|" in command'],
    ["{{ if | .A }}x{{ end }}", 'unexpected "|" in if'],
    ['{{ block "x" | .A }}x{{ end }}', 'unexpected "|" in block clause'],
    ["{{ .A | | print }}", 'unexpected "|" in command'],
    ["{{ with .A | | print }}x{{ end }}", 'unexpected "|" in with'],
    ['{{ template | "x" }}', 'unexpected "|" in template clause'],
  ]);
});

test("go template pipes › given a `|` at the end of a pipeline, then it parses (Go's command takes it and the pipeline ends)", (t) => {
  // Given a trailing pipe after one and after two commands, and after an if's pipeline; when checked; then no error
  accepts(t, ["{{ .Zone | }}", "{{ .Zone | print |}}", "{{ if .Zone | }}x{{ end }}", "{{ (.Zone) | }}"]);
});

test("go template pipes › given an empty ( ) as a command, then Go's 'missing value for parenthesized pipeline'", (t) => {
  // Given `( )` alone and as a later stage; when checked; then Go names the parenthesized pipeline
  rejects(t, [["{{ ( ) }}", "missing value for parenthesized pipeline"], ["{{ .A | () }}", "missing value for parenthesized pipeline"]]);
});

test("go template pipes › given a block without a pipeline, then Go's 'missing value for block clause'", (t) => {
  // Given a block with only its name; when checked; then the clause is named as Go names it
  t.is(goTemplateError('{{ block "x" }}x{{ end }}'), "template: :1: missing value for block clause");
});
