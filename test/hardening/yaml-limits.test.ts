// YAML limits that hold for every syntax: deep block style (`- - - …`, `- a: - a: …`, `? ? …`, indentation),
// flow style and alias bombs are refused before the parser runs, with a clear message — on control-plane
// bodies, in policy files, and to `meshext inject`'s input reader and in a `--config` file.
// The same inputs through `meshext inject` and `--config` as processes: yaml-limits-cli.test.ts.
import { writeFileSync } from "node:fs";
import test from "ava";
import { ConfigError, resolveFlags } from "../../extproc/config/flags.js";
import { SIDECAR_FLAGS } from "../../extproc/config/sidecar.js";
import { parseInput } from "../../extproc/inject/document.js";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import { call, startTestControlPlane, tempDir } from "../control-plane/helpers.js";
import { DEEP, injectInputs, MIB } from "./yaml-inputs.js";

test("yaml limits › control plane: every deep body up to the size limit is a 400 naming the limit", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  for (const [what, body] of Object.entries(DEEP)) {
    const reply = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", body, { "content-type": "application/yaml" });
    t.is(reply.status, 400, what);
    t.regex(reply.body.detail, /nests deeper than 64 levels|more than \d+ nodes/, what);
  }
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions")).status, 200, "still serving");
});

test("yaml limits › control plane: a flat YAML body of many small entries is refused before the parser, quickly", async (t) => {
  // Given a running control plane
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  // When a body just under 1 MiB of tiny YAML entries (far past the YAML node limit) is PUT
  const flat = "type: MeshTrafficPermission\nname: p\nmesh: default\nspec:\n" + Array.from({ length: 60_000 }, (_, i) => `  k${i}: v\n`).join("");
  const cpuBefore = process.cpuUsage();
  const reply = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", flat.slice(0, MIB - 64), { "content-type": "application/yaml" });
  const cpu = process.cpuUsage(cpuBefore);
  // Then it is a 400 naming the node limit, decided by the linear pre-scan (the YAML library, ~30 µs a node,
  // would have taken seconds); the CPU this process spent (client and server) stays far below the parser's cost
  t.is(reply.status, 400);
  t.regex(reply.body.detail, /more than 2500 nodes/);
  t.log(`cpu for the refused 1 MiB flat body: ${((cpu.user + cpu.system) / 1000).toFixed(1)} ms (client and server)`);
  t.true((cpu.user + cpu.system) / 1000 < 1000, "refused without running the YAML parser over the body");
  // And the same entries as one JSON object (JSON.parse) are held to the JSON node limit instead
  const asJson = JSON.stringify({ type: "MeshTrafficPermission", name: "p", mesh: "default", spec: Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, "v"])) });
  const jsonReply = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", asJson, { "content-type": "application/json" });
  t.is(jsonReply.status, 400, "3 000 entries fit the JSON node limit; the body is refused by validation (unknown spec fields), not by the limit");
  t.notRegex(jsonReply.body.detail ?? "", /more than \d+ nodes/);
});

test("yaml limits › policy files: deep documents are rejected with a violation, never a throw", (t) => {
  for (const [what, text] of Object.entries(DEEP)) {
    const result = parsePolicyText(text, "deep.yaml");
    t.deepEqual(result.policies, [], what);
    t.regex(JSON.stringify(result.rejected), /nests deeper than 64 levels/, what);
  }
});

test("yaml limits › inject's input reader: alias bombs and deep input are refused with a message, never a throw", (t) => {
  // given the inputs `meshext inject` refuses as [input_invalid]; when its reader reads each; then it refuses it, naming why
  for (const [what, input] of Object.entries(injectInputs())) {
    const result = parseInput(input);
    t.false(result.ok, what);
    t.regex(result.ok ? "" : result.message, /^input (nests deeper than 64 levels|has more than \d+ nodes|document 1 cannot be read: .*[Aa]lias)/, what);
  }
});

test("yaml limits › --config: deep nesting and alias bombs in the file are a ConfigError naming the file and the limit", async (t) => {
  // given config files that nest past the limit or expand aliases
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  const file = `${dir.path}/config.yaml`;
  const cases = {
    "block scalar": [DEEP["deep sequences after a `'` line in a block scalar"]!, /nests deeper than 64 levels/],
    "error recovery": [DEEP["invalid YAML that error recovery nests (? then a multi-line quoted key, repeated)"]!, /nests deeper than 64 levels/],
    "an alias": ["log-level: &l debug\nadmin-listen: *l\n", /is not valid YAML or JSON: .*[Aa]lias/],
  } as const;
  for (const [what, [text, limit]] of Object.entries(cases)) {
    writeFileSync(file, text);
    // when the sidecar's flags are resolved with --config naming it; then a ConfigError names the file and the limit
    const error = t.throws(() => resolveFlags(SIDECAR_FLAGS, ["--config", file], {}), { instanceOf: ConfigError }, what);
    t.true(error?.message.startsWith(`--config: ${file} `), `${what}: ${error?.message.slice(0, 200)}`);
    t.regex(error?.message ?? "", limit, what);
  }
});
