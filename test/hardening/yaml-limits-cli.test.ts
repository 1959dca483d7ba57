// YAML limits as processes see them: `meshext inject` answers one `[input_invalid]` line (never a stack trace) and
// `meshext sidecar --config` exits 2 naming the limit, quickly. Their readers are checked in process in
// yaml-limits.test.ts (which the policy area's mutation run uses: these start a process per input).
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import test from "ava";
import { tempDir } from "../control-plane/helpers.js";
import { DEEP, injectInputs } from "./yaml-inputs.js";

const CLI = fileURLToPath(new URL("../../extproc/cli.js", import.meta.url));

test("yaml limits › meshext inject: alias bombs and deep input give the one-line [input_invalid] error", (t) => {
  for (const [what, input] of Object.entries(injectInputs())) {
    const r = spawnSync(process.execPath, [CLI, "inject"], { input, encoding: "utf8", env: { PATH: process.env.PATH ?? "" }, timeout: 20_000 });
    t.is(r.status, 1, what);
    t.is(r.stdout, "", what);
    t.is(r.stderr.trim().split("\n").length, 1, `${what}: ${r.stderr.slice(0, 300)}`);
    t.regex(r.stderr, /^meshext inject: not injecting: .*\[input_invalid\]\n$/, what);
  }
});

test("yaml limits › --config: deep nesting after a `'` line in a block scalar exits 2 with the limit, quickly", async (t) => {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  for (const [what, text] of Object.entries({ "block scalar": DEEP["deep sequences after a `'` line in a block scalar"]!, "error recovery": DEEP["invalid YAML that error recovery nests (? then a multi-line quoted key, repeated)"]! })) {
    const file = `${dir.path}/config.yaml`;
    writeFileSync(file, text);
    const started = Date.now();
    const r = spawnSync(process.execPath, [CLI, "sidecar", "--config", file], { encoding: "utf8", env: { PATH: process.env.PATH ?? "" }, timeout: 20_000 });
    t.is(r.status, 2, `${what}: ${r.stderr.slice(0, 300)}`);
    t.regex(r.stderr, /nests deeper than 64 levels/, what);
    t.true(Date.now() - started < 10_000, what);
  }
});
