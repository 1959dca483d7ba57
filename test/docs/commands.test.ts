// The commands the README and docs show still work: every `meshext …` line of their shell blocks names a real
// command whose flags (and values) the CLI accepts as written, the README's injected Deployment is what
// `meshext inject` prints, the inject docs name only containers inject writes, and the /explain example of
// envoy/policies/README.md gives, under `meshext up`, the decision it says it gives.
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

/** The fenced block right after `<!-- inject-example: NAME -->` in the README. */
function readmeExample(name: "input" | "output"): string {
  const m = new RegExp(`<!-- inject-example: ${name} -->\\n\`\`\`yaml\\n([\\s\\S]*?)\`\`\`\\n`).exec(readFileSync(join(ROOT, "README.md"), "utf8"));
  if (!m) throw new Error(`README.md has no inject-example: ${name} block`);
  return m[1]!;
}

const injectOf = (input: string, flags: string[] = []) => spawnSync(process.execPath, [CLI, "inject", ...flags], { input, encoding: "utf8", timeout: 20_000, env: { ...process.env, MESHEXT_RUNTIME_SETTINGS: "off" } });

test("docs › the README's injected Deployment is what meshext inject prints for its example", (t) => {
  // Given the README's example Deployment
  const input = readmeExample("input");
  // When meshext inject runs on it with no flags
  const r = injectOf(input);
  // Then it succeeds and prints exactly the injected Deployment the README shows
  t.is(r.status, 0, r.stderr);
  t.is(r.stdout, readmeExample("output"));
});

test("docs › every meshext container and volume the README, inject and drain docs name is one meshext inject writes (or the older design they say it removes)", (t) => {
  // Given what inject writes for the README's example, in both modes
  const written = new Set<string>();
  for (const flags of [[], ["--no-native-sidecars"]]) {
    for (const m of injectOf(readmeExample("input"), flags).stdout.matchAll(/name: (meshext-[a-z-]+)/g)) written.add(m[1]!);
  }
  t.true(written.has("meshext-sidecar") && written.has("meshext-init"), [...written].join(", "));
  // When the README and docs/inject.md name containers and volumes in backticks
  let named = 0;
  for (const file of ["README.md", "docs/inject.md", "docs/drain.md"]) {
    const text = readFileSync(join(ROOT, file), "utf8");
    for (const m of text.matchAll(/`(meshext-(?:sidecar|init|envoy|tmp|envoy-config)[a-z-]*)`/g)) {
      const line = text.slice(text.lastIndexOf("\n", m.index) + 1, text.indexOf("\n", m.index));
      // Then each is written by inject, unless the sentence is about the older design re-injection removes
      t.true(written.has(m[1]!) || /older meshext/.test(line), `${file}: ${m[1]} is not written by meshext inject: ${line}`);
      named++;
    }
  }
  t.true(named >= 10, `${named} names found`);
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
