// Finds Debian tools the tests drive for real (promtool, prometheus); tests skip with a printed
// reason where one is missing (scripts/test-deps.sh installs them under `npm test` as root).
import { execFileSync } from "node:child_process";

export function which(tool: string): string | undefined {
  try {
    return execFileSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}
