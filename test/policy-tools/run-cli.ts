// Runs the real `meshext` binary (dist/extproc/cli.js) and collects its exit code and output.
import { spawn } from "node:child_process";
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const CLI = fileURLToPath(new URL("../../extproc/cli.js", import.meta.url));
export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** The sample policies (envoy/policies) copied to `out` without their MeshFaultInjection, whose random aborts and
 * delays would make decisions vary from run to run. */
export function samplePoliciesWithoutFaults(out: string): string {
  cpSync(join(ROOT, "envoy", "policies"), out, { recursive: true });
  rmSync(join(out, "fault-injection.yaml"));
  return out;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `meshext ARGS…` from the repository root; killed (code null) after `timeoutMs`. */
export function meshext(args: readonly string[], timeoutMs = 30_000, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, MESHEXT_RUNTIME_SETTINGS: "off", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
