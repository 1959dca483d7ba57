// YAML limits that hold for every syntax: deep block style (`- - - …`, `- a: - a: …`, `? ? …`, indentation),
// flow style and alias bombs are refused before the parser runs, with a clear message — on control-plane
// bodies, in policy files, and as `meshext inject` input (one `[input_invalid]` line, never a stack trace).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import test from "ava";
import { parsePolicyText } from "../../extproc/policy/documents/parse.js";
import { call, startTestControlPlane, tempDir } from "../control-plane/helpers.js";

const CLI = fileURLToPath(new URL("../../extproc/cli.js", import.meta.url));
const MIB = 1 << 20;

/** Bodies just under 1 MiB, one per way YAML nests. */
const DEEP: Record<string, string> = {
  "compact sequences (- - - …)": "- ".repeat(MIB / 2 - 8) + "x\n",
  "sequence of mappings (- a: - a: …)": "- a: ".repeat(MIB / 5 - 8) + "x\n",
  "explicit keys (? ? …)": "? ".repeat(MIB / 2 - 8) + "x\n",
  "indentation, one level per line": Array.from({ length: 1400 }, (_, i) => " ".repeat(i) + "- ").join("\n"),
  "mapping then sequence at one indent": Array.from({ length: 700 }, (_, i) => `${" ".repeat(i * 2)}a:\n${" ".repeat(i * 2)}- b:`).join("\n"),
  "flow brackets": "a: " + "[".repeat(MIB / 2 - 8) + "]".repeat(MIB / 2 - 8),
  "deep sequences behind a quote that is not one (a')": "x: a'\n" + "- ".repeat(MIB / 2 - 16) + "x\n",
  "deep sequences after a `'` line in a block scalar": "note: |\n  '\nspec:\n  " + "- ".repeat(MIB / 2 - 32) + "x\n",
  "deep sequences after a `\"` line in a folded block scalar": 'note: >-\n  "\nspec:\n  ' + "- ".repeat(MIB / 2 - 32) + "x\n",
  "invalid YAML that error recovery nests (? then a multi-line quoted key, repeated)": '  ? \n  "a:   ? \n'.repeat(Math.floor(MIB / 20)),
};

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

const ALIAS_BOMB = [
  "apiVersion: v1",
  "kind: Pod",
  "metadata: {name: p}",
  "x1: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]",
  "x2: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]",
  "x3: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]",
  "x4: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]",
  "x5: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]",
  "x6: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]",
  "x7: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]",
  "spec: {containers: [{name: app, image: app}], x: *g}",
].join("\n");

test("yaml limits › meshext inject: alias bombs and deep input give the one-line [input_invalid] error", (t) => {
  const inputs = {
    "alias bomb": ALIAS_BOMB,
    "deep compact sequences": DEEP["compact sequences (- - - …)"]!,
    "deep indentation": DEEP["indentation, one level per line"]!,
    "deep sequences after a `'` line in a block scalar": DEEP["deep sequences after a `'` line in a block scalar"]!,
    "error recovery nesting": DEEP["invalid YAML that error recovery nests (? then a multi-line quoted key, repeated)"]!,
  };
  for (const [what, input] of Object.entries(inputs)) {
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
  const { writeFileSync } = await import("node:fs");
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
