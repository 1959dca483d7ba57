// A FIFO with no reader as --decision-log: the sidecar exits 2 with a message at start instead of hanging
// before its ports bind (opening a FIFO for writing waits for a reader).
import test from "ava";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnMeshext } from "../drain/meshext-process.js";

test("decision log › given a FIFO nobody reads as --decision-log, when the sidecar starts, then it exits 2 naming the FIFO", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "meshext-fifo-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const fifo = join(dir, "decisions.fifo");
  execFileSync("mkfifo", [fifo]);
  const proc = spawnMeshext(["sidecar", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--decision-log", fifo]);
  t.teardown(() => proc.child.kill("SIGKILL"));
  let timer: NodeJS.Timeout | undefined;
  const exit = await Promise.race([proc.exited, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), 15_000)))]);
  clearTimeout(timer); // a pending 15 s timer would hold the test process open that long after the test passed
  t.truthy(exit, "still starting after 15 s: hung opening the FIFO");
  t.is(exit?.code, 2);
  t.regex(proc.stderr(), /--decision-log: .*decisions\.fifo.*no reader/);
});
