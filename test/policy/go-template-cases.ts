// Assertions shared by the Go template tests: each text parses, or gets Go's error on line 1.
import type { ExecutionContext } from "ava";
import { goTemplateError } from "../../extproc/policy/documents/go-template.js";

/** Every text parses as Go parses it. */
export function accepts(t: ExecutionContext, texts: string[]): void {
  for (const text of texts) t.is(goTemplateError(text), undefined, text);
}

/** Each text gets `template: :1: <error>`, Go's error on its first line. */
export function rejects(t: ExecutionContext, cases: Array<[string, string]>): void {
  for (const [text, error] of cases) t.is(goTemplateError(text), `template: :1: ${error}`, text);
}
