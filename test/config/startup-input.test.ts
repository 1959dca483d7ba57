// Bad start-up input — a policy directory, dataplane file, decision-log target or config file that is missing or
// unreadable — stops `meshext sidecar` and `meshext run` at once with exit 2 and one line naming the flag.
import test from "ava";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const CLI = "dist/extproc/cli.js";

/** Runs the CLI; a process still running after 30 s (a hang: it exits within a second on a quiet machine) is killed and reported as code null. */
function run(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

const ports = ["--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"];
const dir = mkdtempSync(join(tmpdir(), "meshext-startup-"));
const aFile = join(dir, "not-a-directory.yaml");
writeFileSync(aFile, "type: Mesh\nname: default\n");
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

const cases: Array<{ what: string; args: string[]; line: RegExp }> = [
  { what: "a missing policy directory", args: ["--policies", "/nonexistent-meshext-policies"], line: /--policies: cannot read \/nonexistent-meshext-policies: no such directory/ },
  { what: "a policy path that is a file", args: ["--policies", aFile], line: /--policies: .*not-a-directory\.yaml is not a directory/ },
  { what: "a missing dataplane file", args: ["--policies", dir, "--dataplane-file", "/nonexistent-meshext-dp.yaml"], line: /--dataplane-file: cannot read \/nonexistent-meshext-dp\.yaml/ },
  { what: "a decision-log target in a missing directory", args: ["--decision-log", "/nonexistent-meshext-dir/decisions.log"], line: /--decision-log: cannot open \/nonexistent-meshext-dir\/decisions\.log/ },
  { what: "a missing config file", args: ["--config", "/nonexistent-meshext-config.yaml"], line: /--config: cannot read \/nonexistent-meshext-config\.yaml/ },
];

for (const command of ["sidecar", "run"]) {
  for (const c of cases) {
    test(`start-up input › meshext ${command} with ${c.what} exits 2 with one line naming the flag`, async (t) => {
      // Given the bad input; when the command starts (run: with an Envoy command that must never be started)
      const extra = command === "run" ? ["--", "/nonexistent-envoy-binary"] : [];
      const r = await run([command, ...ports, ...c.args, ...extra]);
      // Then it exits 2 by itself, at once, with one readable line and no stack trace
      t.is(r.code, 2, r.stderr);
      t.regex(r.stderr, c.line);
      t.regex(r.stderr, new RegExp(`^meshext ${command}: `));
      t.is(r.stderr.trim().split("\n").length, 1, r.stderr);
    });
  }
}
