// The commands the README and docs show still work: every `meshext …` line of their shell blocks names a real
// command whose flags (and values) the CLI accepts as written, and the /explain example of envoy/policies/README.md
// gives, under `meshext up`, the decision it says it gives.
import test from "ava";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { eventually, startUp } from "../control-plane/helpers.js";

const ROOT = process.cwd();
const CLI = join(ROOT, "dist/extproc/cli.js");
const DOCS = ["README.md", "envoy/README.md", "envoy/policies/README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** Lines of the ```sh / ```bash / ```console blocks of a Markdown file (prompts stripped, continuations joined). */
function shellLines(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  return [...text.matchAll(/```(?:sh|bash|console|shell)\n([\s\S]*?)```/g)].flatMap((m) =>
    m[1]!
      .replace(/\\\n\s*/g, " ")
      .split("\n")
      .map((l) => l.replace(/^\$ /, "").trim())
      .filter((l) => l !== "" && !l.startsWith("#")),
  );
}

/** Shell words of one command line, up to a pipe, redirection or `&&` (single and double quotes honoured). */
function words(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/'([^']*)'|"((?:\\.|[^"])*)"|(\S+)/g)) {
    const word = m[1] ?? m[2] ?? m[3]!;
    if (m[3] !== undefined && /^(\||&&|;|<|>|2>|>>)/.test(word)) break;
    out.push(word);
  }
  return out;
}

/** Every `meshext <command> …` invocation shown, with where it is shown. */
function meshextCommands(): Array<{ where: string; args: string[] }> {
  return DOCS.flatMap((file) =>
    shellLines(file).flatMap((line) => {
      const w = words(line);
      const at = w[0] === "meshext" ? 1 : w[0] === "npx" && w[1] === "meshext" ? 2 : w[0] === "node" && w[1] === "dist/extproc/cli.js" ? 2 : -1;
      return at < 0 ? [] : [{ where: `${file}: ${line}`, args: w.slice(at) }];
    }),
  );
}

test("docs › every meshext command line in the README and docs parses as written", (t) => {
  const commands = meshextCommands();
  t.true(commands.length >= 5, commands.map((c) => c.where).join("\n"));
  for (const { where, args } of commands) {
    // When the line runs with --help added before any `--` (so nothing starts: flags and their values are still checked)
    const dash = args.indexOf("--");
    const own = dash < 0 ? args : args.slice(0, dash);
    const r = spawnSync(process.execPath, [CLI, ...own, "--help"], { encoding: "utf8", timeout: 20_000, env: { ...process.env, MESHEXT_RUNTIME_SETTINGS: "off" } });
    // Then the command exists and accepts every flag shown
    t.is(r.status, 0, `${where}\n${r.stderr}`);
    t.regex(r.stdout, /^Usage: /, where);
  }
});

test("docs › the /explain example of envoy/policies/README.md decides under meshext up as it says", async (t) => {
  // Given the example's request bodies and the decisions written after them
  const lines = readFileSync(join(ROOT, "envoy/policies/README.md"), "utf8").split("\n");
  const examples = lines.flatMap((l, i) => {
    const body = /\/explain -d '([^']+)'/.exec(l)?.[1];
    const expected = /^# → "decision":\{"type":"(\w+)"/.exec(lines[i + 1] ?? "")?.[1];
    return body && expected ? [{ body, expected }] : [];
  });
  t.true(examples.length >= 1, "envoy/policies/README.md shows an /explain call and its decision");
  // When `meshext up` runs
  const up = await startUp(t);
  t.true(await eventually(() => up.banner().includes("Ctrl-C"), 30_000), up.banner());
  const admin = /sidecar admin\s+(http:\/\/\S+)/.exec(up.banner())![1]!;
  // Then each example gets the decision the README shows (once the seeded set has loaded)
  for (const { body, expected } of examples) {
    const decide = async () => ((await (await fetch(`${admin}/explain`, { method: "POST", body })).json()) as { decision: { type: string } }).decision.type;
    t.true(await eventually(async () => (await decide()) === expected), `${body}: ${await decide()}`);
  }
});
