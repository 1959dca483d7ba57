// go template grammar › keywords, template names, comments, escapes, raw strings, parenthesised stages, variables and
// braces are read as Go's text/template lexer and parser read them: what Go parses is accepted, the rest gets Go's error.
import test from "ava";
import { accepts, rejects } from "./go-template-cases.js";

test("go template grammar › given a keyword where an operand belongs, then Go's 'unexpected <keyword> in operand'", (t) => {
  // Given the grammar keywords used as arguments; when checked; then each is refused as Go refuses it
  rejects(t, ["else", "end", "template", "break", "continue", "if", "range", "with", "define", "block"].map((k) => [`{{ print ${k} }}`, `unexpected <${k}> in operand`]));
  rejects(t, [["{{ if else }}x{{ end }}", "unexpected <else> in operand"]]);
});

test("go template grammar › given the constants nil, true and false as a command or a first stage, then they parse", (t) => {
  // Given the value keywords where a command starts; when checked; then no error (nil fails only when run)
  accepts(t, ["{{ nil }}", "{{ true }}", "{{ false }}", "{{ true | print }}", "{{ false | print }}", "{{ nil | print }}"]);
});

test("go template grammar › given an opener or block without its pipeline, then Go's 'missing value for' it", (t) => {
  // Given if/range/with/block with nothing to test or run; when checked; then the keyword is named
  rejects(t, [["{{ if }}x{{ end }}", "missing value for if"], ["{{ range }}x{{ end }}", "missing value for range"], ["{{ with }}x{{ end }}", "missing value for with"],
    ['{{ block "x" }}x{{ end }}', "missing value for block clause"], ["{{ }}", "missing value for command"]]);
});

test("go template grammar › given template, define and block, then the name is not a command and what follows is checked", (t) => {
  // Given a template call with and without a pipeline, and a define or block with a name; when checked; then
  accepts(t, ['{{ template "x" }}', '{{ template "x" .A }}', '{{ template "x" .A | print }}', '{{ define "x" }}a{{ end }}', '{{ block "x" .A }}a{{ end }}']);
  rejects(t, [['{{ template "x" nope }}', 'function "nope" not defined'], ['{{ block "x" nope }}a{{ end }}', 'function "nope" not defined'],
    ['{{ define "x" .A }}a{{ end }}', 'unexpected ".A" in define clause'], ['{{ define "x" if }}a{{ end }}', "unexpected <if> in define clause"]]);
});

test("go template grammar › given a comment holding a quote, then it parses; a comment not closed by the delimiter does not", (t) => {
  // Given comments right after the delimiter; when checked; then the comment's text is not lexed
  accepts(t, ['{{/* say "hi */}}a', "{{- /* it's */ -}}a", '{{/* a */}}{{ print "x" }}']);
  rejects(t, [["{{/* a */ }}", "comment ends before closing delimiter"], ["{{/* a */", "comment ends before closing delimiter"], ["{{/* a", "unclosed comment"]]);
});

test("go template grammar › given escaped quotes and raw strings, then the string ends where Go ends it", (t) => {
  // Given a quoted string with an escaped quote and raw strings of several letters; when checked; then they parse
  accepts(t, ['{{ print "a\\"b" }}', "{{ print `ab` }}", "{{ print `abc` `de` }}"]);
  rejects(t, [['{{ print "a\\"b" | nope }}', 'function "nope" not defined'], ['{{ .A | "x" }}', "non executable command in pipeline stage 2"], ['{{.A|"x"}}', "non executable command in pipeline stage 2"]]);
});

test("go template grammar › given a parenthesised pipeline as a later stage and a variable stage, then they parse", (t) => {
  // Given `(print)` after a pipe and a declared variable as a stage; when checked; then Go accepts them
  accepts(t, ["{{ .A | (print) }}", "{{ $x := .A }}{{ .B | $x }}"]);
});

test("go template grammar › given a function followed by a field chain, then the function's name is looked up", (t) => {
  // Given `label.Zone` and `nope.Zone`; when checked; then the first parses, the second names nope
  accepts(t, ["{{ label.Zone }}"]);
  rejects(t, [["{{ nope.Zone }}", 'function "nope" not defined']]);
});

test("go template grammar › given a brace inside an action, then Go's 'unrecognized character'", (t) => {
  // Given a lone } or { outside a string in an action; when checked; then Go's lexer error
  rejects(t, [["{{ .A }x }}", "unrecognized character in action: U+007D '}'"], ["{{a{{}}", "unrecognized character in action: U+007B '{'"],
    ["{{ .A }|nope }}", "unrecognized character in action: U+007D '}'"]]);
  accepts(t, ['{{ print "{}" }}', "{{ print `}` }}"]);
});
