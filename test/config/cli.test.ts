// The built `meshext` executable: help output, exit code 2 and a readable message on bad input.
import test from "ava";
import { spawnSync } from "node:child_process";

const CLI = "dist/extproc/cli.js";
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 20_000 });

test("cli › meshext --help lists the commands", (t) => {
  const r = run(["--help"]);
  t.is(r.status, 0);
  for (const cmd of ["up", "sidecar", "run", "control-plane", "inject"]) t.regex(r.stdout, new RegExp(`\\n  ${cmd} `));
});

test("cli › meshext sidecar --help lists flags with defaults", (t) => {
  const r = run(["sidecar", "--help"]);
  t.is(r.status, 0);
  t.regex(r.stdout, /--grpc-listen HOSTPORT[\s\S]*default: 127\.0\.0\.1:9001/);
  t.regex(r.stdout, /--admin-listen HOSTPORT[\s\S]*default: 127\.0\.0\.1:9902/);
});

test("cli › a bad flag value exits 2 naming the flag", (t) => {
  const r = run(["sidecar", "--grpc-listen", "nowhere"]);
  t.is(r.status, 2);
  t.regex(r.stderr, /meshext sidecar: flag --grpc-listen: expected HOST:PORT/);
  t.is(r.stdout, "");
});

test("cli › a bad environment value exits 2 naming the variable", (t) => {
  const r = run(["sidecar"], { MESHEXT_DRAIN_TIME: "forever" });
  t.is(r.status, 2);
  t.regex(r.stderr, /MESHEXT_DRAIN_TIME: --drain-time/);
});

test("cli › an unknown command exits 2", (t) => {
  const r = run(["frobnicate"]);
  t.is(r.status, 2);
  t.regex(r.stderr, /unknown command "frobnicate"/);
});
