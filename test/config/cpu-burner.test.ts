// The bounded CPU burner the under-load suite runs (scripts/cpu-burner.mjs): it burns about the share of a core it is
// asked for and no more, it goes away with its parent, and it refuses a share it cannot mean.
import test from "ava";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { eventually, sleep } from "../control-plane/helpers.js";

const BURNER = join(process.cwd(), "scripts", "cpu-burner.mjs");

function cpuSeconds(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test("cpu-burner › burns at most its share of a core and exits once its parent is gone", async (t) => {
  t.timeout(30_000);
  // Given a parent process that starts a burner at 0.3 of a core, prints its pid, and exits after 2.5 s
  const parent = spawn(process.execPath, ["-e", `
    const b = require("node:child_process").spawn(process.execPath, [${JSON.stringify(BURNER)}, "--share", "0.3", "--max-s", "60"], { stdio: "ignore", detached: true });
    b.unref(); console.log(b.pid); setTimeout(() => process.exit(0), 2500);`], { stdio: ["ignore", "pipe", "inherit"] });
  const pid = await new Promise<number>((resolve) => parent.stdout.once("data", (d) => resolve(Number(String(d).trim()))));
  t.teardown(() => { if (alive(pid)) process.kill(pid, "SIGKILL"); });

  // When its CPU is read over 1.5 s while the parent lives
  await sleep(300);
  const before = cpuSeconds(pid)!;
  const startedAt = Date.now();
  await sleep(1500);
  const cores = (cpuSeconds(pid)! - before) / ((Date.now() - startedAt) / 1000);

  // Then it burnt some CPU but not more than its share (with room for a clock tick)
  t.true(cores > 0.02, `the burner used ${cores.toFixed(2)} cores`);
  t.true(cores < 0.5, `the burner used ${cores.toFixed(2)} cores, asked for 0.3`);
  // And it exits within a few seconds of its parent
  t.true(await eventually(async () => !alive(pid), 10_000, 100), "the burner outlived its parent");
});

test("cpu-burner › a share outside (0, 1] or a word for a number exits 2 with the reason", (t) => {
  // Given / When the burner is asked for two cores, or for "lots"
  const tooMuch = spawnSync(process.execPath, [BURNER, "--share", "2"], { encoding: "utf8" });
  const word = spawnSync(process.execPath, [BURNER, "--share", "lots"], { encoding: "utf8" });
  // Then both refuse with exit 2 and say why
  t.is(tooMuch.status, 2);
  t.regex(tooMuch.stderr, /--share must be in \(0, 1\], got 2/);
  t.is(word.status, 2);
  t.regex(word.stderr, /--share needs a number, got lots/);
});
