// Whether a MeshIdentity SPIFFE template (`spec.spiffeID.trustDomain` / `path`) parses as a Go text/template
// with Kuma's one extra function `label` (meshidentity/api/v1alpha1/validator.go at v2.14.3). A checker, not a
// renderer: the errors Go's parser gives for the mistakes people make, worded as Go words them.

/** Go's text/template builtins plus Kuma's `label`: any other function name does not parse. */
const FUNCTIONS = new Set(["and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf", "println", "urlquery", "eq", "ge", "gt", "le", "lt", "ne", "label"]);
const OPENERS = new Set(["if", "range", "with", "define", "block"]);
/** The keywords of an action's grammar: never an operand. */
const KEYWORDS = new Set([...OPENERS, "else", "end", "template", "break", "continue"]);
/** The keywords that are values (operands) rather than parts of an action's grammar. */
const CONSTANTS = new Set(["nil", "true", "false"]);
/** How Go's parser names the pipeline of a keyword in its errors, where that is not the keyword itself. */
const CLAUSES: Record<string, string> = { block: "block clause", template: "template clause" };

/** The parse error Go reports for `text` (as `template: :LINE: message`), or undefined when it parses. */
export function goTemplateError(text: string): string | undefined {
  const open: string[] = [];
  let pos = 0;
  for (;;) {
    const start = text.indexOf("{{", pos);
    if (start < 0) break;
    const line = lineOf(text, start);
    // a comment starts right after the delimiter (and its trim marker) and ends at `*/` and the closing delimiter
    const after = text.startsWith("- ", start + 2) ? start + 4 : start + 2;
    if (text.startsWith("/*", after)) {
      const close = text.indexOf("*/", after + 2);
      if (close < 0) return `template: :${line}: unclosed comment`;
      const closed = text.startsWith("}}", close + 2) ? close + 4 : text.startsWith(" -}}", close + 2) ? close + 6 : -1;
      if (closed < 0) return `template: :${line}: comment ends before closing delimiter`;
      pos = closed;
      continue;
    }
    const end = actionEnd(text, start + 2);
    if (end === UNTERMINATED) return `template: :${line}: unterminated quoted string`;
    if (end < 0) return `template: :${line}: unclosed action`;
    let body = text.slice(start + 2, end);
    if (body.startsWith("- ")) body = body.slice(1);
    if (body.endsWith(" -")) body = body.slice(0, -1);
    pos = end + 2;
    const words = tokens(body);
    if (typeof words === "string") return `template: :${line}: ${words}`;
    const keyword = words[0];
    if (keyword === "end") {
      if (!open.pop()) return `template: :${line}: unexpected {{end}}`;
      continue;
    }
    if (keyword === "else") {
      const top = open.at(-1);
      if (top === undefined) return `template: :${line}: unexpected {{else}}`;
      if (top === "define" || top === "block") return `template: :${line}: unexpected {{else}} in ${top} clause`;
      if (top.endsWith(" else")) return `template: :${line}: expected end; found {{else}}`;
      // a plain {{else}} starts the last branch; `else if` / `else with` chain on, and Go lets a later {{else}} follow
      if (words.length === 1) open[open.length - 1] = `${top} else`;
      continue;
    }
    if (keyword !== undefined && OPENERS.has(keyword)) open.push(keyword);
    if (keyword === "break" || keyword === "continue") {
      if (!inRangeBody(open)) return `template: :${line}: {{${keyword}}} outside {{range}}`;
      continue;
    }
    // define and block name a template first (define takes nothing more); template's name is a string, never an error
    const named = keyword === "define" || keyword === "block";
    const control = keyword !== undefined && KEYWORDS.has(keyword);
    const pipeline = words.slice(named ? 2 : control ? 1 : 0);
    if (keyword === "define" && pipeline.length > 0) return `template: :${line}: unexpected ${operandName(pipeline[0]!)} in define clause`;
    if (keyword === "define") continue;
    const problem = pipelineError(pipeline, control ? (CLAUSES[keyword!] ?? keyword!) : "command");
    if (problem) return `template: :${line}: ${problem}`;
  }
  if (open.length > 0) return `template: :${lineOf(text, text.length)}: unexpected EOF`;
  return undefined;
}

/** Whether a {{break}} or {{continue}} stands in a range's body (not its else): Go counts ranges per template, so a
 * block's body starts with none (a define stands only at the top, with no range around it). */
function inRangeBody(open: string[]): boolean {
  return [...open].reverse().find((kind) => kind === "range" || kind === "block") === "range";
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text[i] === "\n") line++;
  return line;
}

const UNTERMINATED = -2;

/** Index of the `}}` closing the action that starts at `from`, skipping quoted strings; -1 when there is none. */
function actionEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "`") {
      const close = c === '"' ? closingQuote(text, i) : text.indexOf("`", i + 1);
      if (close < 0) return UNTERMINATED;
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
    } else if (c === "{" || c === "}") {
      return `unrecognized character in action: U+007${c === "{" ? "B" : "D"} '${c}'`;
    } else {
      let j = i;
      while (j < body.length && !/[\s|()"`{}]/.test(body[j]!)) j++;
      out.push(body.slice(i, j));
      i = j;
    }
  }
  return out;
}

/** Go's checks on a pipeline (`context`: how Go names it): not empty, a `|` only after a command (one at the very end
 * is taken by the last command and ignored), no keyword as an operand, every stage after the first executable,
 * functions defined. Parentheses are not nested: their words join the stage they stand in, so an empty `( )` is
 * Go's missing parenthesized pipeline, but a `|` at the end inside them (`(.A |)`, which Go takes) is still refused. */
function pipelineError(words: string[], context: string): string | undefined {
  if (words.length === 0) return `missing value for ${context}`;
  const stages: string[][] = [];
  let stage: string[] | undefined; // the command being read: none at the start and right after a `|`
  for (const w of words) {
    if (w === "|") {
      if (!stage) return `unexpected "|" in ${context}`;
      stage = undefined;
    } else {
      if (!stage) stages.push((stage = []));
      if (w !== "(" && w !== ")") stage.push(w);
    }
  }
  for (let s = 0; s < stages.length; s++) {
    const stage = stages[s]!;
    if (stage.length === 0) return "missing value for parenthesized pipeline";
    for (const w of stage) {
      if (KEYWORDS.has(w)) return `unexpected ${operandName(w)} in operand`;
      // a name, or a name followed by a field chain (`label.Zone`): Go looks the name up as a function
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(w)?.[0];
      if (name !== undefined && !FUNCTIONS.has(name) && !CONSTANTS.has(name)) return `function "${name}" not defined`;
    }
    if (s > 0 && !isExecutable(stage[0]!)) return `non executable command in pipeline stage ${s + 1}`;
  }
  return undefined;
}

/** A word as Go's parser names it in an error: a keyword in angle brackets, anything else quoted. */
function operandName(word: string): string {
  return KEYWORDS.has(word) ? `<${word}>` : JSON.stringify(word);
}

/** A command that can take piped input: a function, a field or method chain, or a variable. */
function isExecutable(word: string): boolean {
  return FUNCTIONS.has(word) || word.startsWith(".") || word.startsWith("$");
}
