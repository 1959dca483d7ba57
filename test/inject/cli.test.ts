// The real `meshext inject` executable: stdout, stderr and exit code for success and refusal.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import test from "ava";
import { parse } from "yaml";
import { fixture, PATCH_DIR, TESTDATA } from "./helpers.js";

const CLI = fileURLToPath(new URL("../../extproc/cli.js", import.meta.url));

function meshext(args: string[], stdin = "", env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, "inject", ...args], { input: stdin, encoding: "utf8", env: { PATH: process.env.PATH ?? "", ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test("inject › CLI: meshext inject < deployment.yaml prints the injected Deployment", (t) => {
  const r = meshext(["--patches", PATCH_DIR], fixture("deployment.yaml"));
  t.is(r.code, 0, r.stderr);
  t.is(r.stderr, "");
  const spec = parse(r.stdout).spec.template.spec;
  t.deepEqual(spec.containers.map((c: { name: string }) => c.name), ["web"]);
  t.deepEqual(spec.initContainers.map((c: { name: string }) => c.name), ["meshext-init", "meshext-sidecar"]);
});

test("inject › CLI: a patch that cannot apply prints nothing on stdout, one error line, exit 1", (t) => {
  const input = fixture("deployment.yaml").replace("privileged,add-env", "escalate,must-not-escalate");
  const r = meshext(["--patches", PATCH_DIR], input);
  t.is(r.code, 1);
  t.is(r.stdout, "");
  t.is(r.stderr.trim().split("\n").length, 1);
  t.regex(r.stderr, /^meshext inject: not injecting Deployment shop\/web: ContainerPatch "must-not-escalate": sidecarPatch\[0\] \{"op":"test"/);
});

test("inject › CLI: a referenced patch with no source configured refuses injection", (t) => {
  const r = meshext([], fixture("deployment.yaml"));
  t.is(r.code, 1);
  t.is(r.stdout, "");
  t.regex(r.stderr, /ContainerPatch "privileged": does not exist/);
});

test("inject › CLI: -f reads a file, MESHEXT_* env sets flags", (t) => {
  const r = meshext(["-f", TESTDATA + "job.yaml"], "", { MESHEXT_INJECT_SIDECAR_IMAGE: "mirror.local/meshext:0.1.0" });
  t.is(r.code, 0, r.stderr);
  t.true(r.stdout.includes("image: mirror.local/meshext:0.1.0"));
});

test("inject › CLI: a bad flag value exits 2; --help lists the flags with defaults", (t) => {
  const bad = meshext(["--drain-time=soon"]);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /--drain-time/);
  const both = meshext(["--patches", PATCH_DIR, "--control-plane", "http://127.0.0.1:5681"]);
  t.is(both.code, 2);
  const help = meshext(["--help"]);
  t.is(help.code, 0);
  t.regex(help.stdout, /--default-patches[\s\S]*--drain-time DURATION\n.*\[default: 30s\]/);
});

test("inject › CLI: a missing input file exits 1 with the path", (t) => {
  const r = meshext(["-f", "/nonexistent/deploy.yaml"]);
  t.is(r.code, 1);
  t.regex(r.stderr, /cannot read \/nonexistent\/deploy\.yaml/);
});
