// Whether a MeshIdentity SPIFFE template (`spec.spiffeID.trustDomain` / `path`) parses as a Go text/template
// with Kuma's one extra function `label` (meshidentity/api/v1alpha1/validator.go at v2.14.3). A checker, not a
// renderer: the errors Go's parser gives for the mistakes people make, worded as Go words them.

/** Go's text/template builtins plus Kuma's `label`: any other function name does not parse. */
const FUNCTIONS = new Set(["and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf", "println", "urlquery", "eq", "ge", "gt", "le", "lt", "ne", "label"]);
const OPENERS = new Set(["if", "range", "with", "define", "block"]);
const KEYWORDS = new Set([...OPENERS, "else", "end", "template", "break", "continue", "nil", "true", "false"]);

/** The parse error Go reports for `text` (as `template: :LINE: message`), or undefined when it parses. */
export function goTemplateError(text: string): string | undefined {
  const open: string[] = [];
  let pos = 0;
  for (;;) {
    const start = text.indexOf("{{", pos);
    if (start < 0) break;
    const line = lineOf(text, start);
    const end = actionEnd(text, start + 2);
    if (end < 0) return `template: :${line}: unclosed action`;
    let body = text.slice(start + 2, end);
    if (body.startsWith("- ")) body = body.slice(1);
    if (body.endsWith(" -")) body = body.slice(0, -1);
    pos = end + 2;
    const trimmed = body.trim();
    if (trimmed.startsWith("/*")) {
      if (!trimmed.endsWith("*/")) return `template: :${line}: unclosed comment`;
      continue;
    }
    const words = tokens(trimmed);
    if (typeof words === "string") return `template: :${line}: ${words}`;
    const keyword = words[0];
    if (keyword === "end") {
      if (!open.pop()) return `template: :${line}: unexpected {{end}}`;
      continue;
    }
    if (keyword === "else") {
      if (open.length === 0) return `template: :${line}: unexpected {{else}}`;
      continue;
    }
    if (keyword !== undefined && OPENERS.has(keyword)) open.push(keyword);
    const pipeline = keyword !== undefined && KEYWORDS.has(keyword) && keyword !== "nil" && keyword !== "true" && keyword !== "false" ? words.slice(1) : words;
    if (keyword === "break" || keyword === "continue" || keyword === "template" || keyword === "define" || keyword === "block") continue;
    const problem = pipelineError(pipeline);
    if (problem) return `template: :${line}: ${problem}`;
  }
  if (open.length > 0) return `template: :${lineOf(text, text.length)}: unexpected EOF`;
  return undefined;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text[i] === "\n") line++;
  return line;
}

/** Index of the `}}` closing the action that starts at `from`, skipping quoted strings; -1 when there is none. */
function actionEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "`") {
      const close = c === '"' ? closingQuote(text, i) : text.indexOf("`", i + 1);
      if (close < 0) return -1;
      i = close;
    } else if (c === "}" && text[i + 1] === "}") return i;
  }
  return -1;
}

function closingQuote(text: string, open: number): number {
  for (let i = open + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i;
    else if (text[i] === "\n") return -1;
  }
  return -1;
}

/** The action split into words, `|` and parentheses kept as words of their own; a string on a lexing error. */
function tokens(body: string): string[] | string {
  const out: string[] = [];
  let i = 0;
  while (i < body.length) {
    const c = body[i]!;
    if (/\s/.test(c)) i++;
    else if (c === "|" || c === "(" || c === ")") (out.push(c), i++);
    else if (c === '"' || c === "`") {
      const close = c === '"' ? closingQuote(body, i) : body.indexOf("`", i + 1);
      if (close < 0) return "unterminated quoted string";
      out.push(body.slice(i, close + 1));
      i = close + 1;
    } else {
      let j = i;
      while (j < body.length && !/[\s|()"`]/.test(body[j]!)) j++;
      out.push(body.slice(i, j));
      i = j;
    }
  }
  return out;
}

/** Go's checks on a pipeline: no empty command, every stage after the first executable, functions defined. */
function pipelineError(words: string[]): string | undefined {
  const stages: string[][] = [[]];
  for (const w of words) {
    if (w === "|") stages.push([]);
    else if (w !== "(" && w !== ")") stages[stages.length - 1]!.push(w);
  }
  if (stages.length === 1 && stages[0]!.length === 0) return "missing value for command";
  for (let s = 0; s < stages.length; s++) {
    const stage = stages[s]!;
    if (stage.length === 0) return "missing value for command";
    for (const w of stage) {
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(w) && !FUNCTIONS.has(w) && !KEYWORDS.has(w)) return `function "${w}" not defined`;
    }
    if (s > 0 && !isExecutable(stage[0]!)) return `non executable command in pipeline stage ${s + 1}`;
  }
  return undefined;
}

/** A command that can take piped input: a function, a field or method chain, or a variable. */
function isExecutable(word: string): boolean {
  return FUNCTIONS.has(word) || word.startsWith(".") || word.startsWith("$");
}
