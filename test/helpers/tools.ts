// Finds Debian tools the tests drive for real (promtool, prometheus); tests skip with a printed
// reason where one is missing (scripts/test-deps.sh installs them under `npm test` as root).
import { execFileSync, spawnSync } from "node:child_process";

export function which(tool: string): string | undefined {
  try {
    return execFileSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** `promtool check metrics` on a /metrics text: its exit status and what it said; undefined when promtool is missing. */
export function promtoolCheckMetrics(text: string): { status: number | null; output: string } | undefined {
  const promtool = which("promtool");
  if (!promtool) return undefined;
  const lint = spawnSync(promtool, ["check", "metrics"], { input: text, encoding: "utf8" });
  return { status: lint.status, output: lint.stdout + lint.stderr };
}
