// A small real tmpfs for full-disk tests (root only): mounted in a fresh temp dir, unmounted when the test ends.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExecutionContext } from "ava";

/** The mount point of a `sizeKiB` tmpfs, or undefined after logging why it cannot be mounted. */
export function mountTmpfs(t: ExecutionContext, sizeKiB: number, prefix = "meshext-full-disk-"): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeKiB}k`, "tmpfs", dir], { stdio: "pipe" });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    t.log(`cannot mount a tmpfs (needs root): ${(err as Error).message}`);
    return undefined;
  }
  t.teardown(() => {
    execFileSync("umount", [dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}
