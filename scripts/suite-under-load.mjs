// `npm run test:under-load`: builds once, then runs the whole suite (ava) several times in a row while a bounded CPU
// burner (scripts/cpu-burner.mjs) keeps a share of every core busy; prints each run's result and the burners' CPU.
// Usage: node scripts/suite-under-load.mjs [--runs 3] [--share 0.5] [--burners N (default: one per core)] [-- AVA ARGS]
import { spawn, spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
const own = dash < 0 ? argv : argv.slice(0, dash);
const avaArgs = dash < 0 ? [] : argv.slice(dash + 1);

function flag(name, fallback) {
  const at = own.indexOf(name);
  if (at < 0) return fallback;
  const value = Number(own[at + 1]);
  if (!Number.isFinite(value) || value <= 0) {
    process.stderr.write(`suite-under-load: ${name} needs a positive number, got ${own[at + 1] ?? "nothing"}\n`);
    process.exit(2);
  }
  return value;
}

const runs = flag("--runs", 3);
const share = flag("--share", 0.5);
const burnerCount = flag("--burners", availableParallelism());

/** CPU seconds a process has used so far (user + system, from /proc), or undefined once it is gone. */
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

function runStep(label, command, args) {
  const startedAt = Date.now();
  const r = spawnSync(command, args, { cwd: ROOT, stdio: "inherit", env: process.env });
  return { label, ok: r.status === 0, status: r.status, seconds: Math.round((Date.now() - startedAt) / 1000) };
}

const prepare = [runStep("test dependencies", "bash", ["scripts/test-deps.sh"]), runStep("build", "npm", ["run", "build"])];
const failedPrep = prepare.find((s) => !s.ok);
if (failedPrep) {
  process.stderr.write(`suite-under-load: ${failedPrep.label} failed (exit ${failedPrep.status})\n`);
  process.exit(1);
}

const burners = Array.from({ length: burnerCount }, () =>
  spawn(process.execPath, [join(ROOT, "scripts", "cpu-burner.mjs"), "--share", String(share)], { stdio: "ignore" }),
);
const stopBurners = () => burners.forEach((b) => b.kill("SIGTERM"));
process.on("exit", stopBurners);
process.on("SIGINT", () => process.exit(130));

const results = [];
for (let i = 1; i <= runs; i++) {
  const before = burners.map((b) => cpuSeconds(b.pid) ?? 0);
  const result = runStep(`run ${i} of ${runs}`, "npx", ["ava", ...avaArgs]);
  const burnt = burners.reduce((sum, b, k) => sum + ((cpuSeconds(b.pid) ?? before[k]) - before[k]), 0);
  result.burnerCores = result.seconds > 0 ? burnt / result.seconds : 0;
  results.push(result);
  process.stderr.write(
    `suite-under-load: ${result.label}: ${result.ok ? "passed" : `FAILED (exit ${result.status})`} in ${result.seconds} s; ` +
      `the burners used ${result.burnerCores.toFixed(2)} cores (asked: ${burnerCount} × ${share})\n`,
  );
}
stopBurners();
const failed = results.filter((r) => !r.ok).length;
process.stderr.write(`suite-under-load: ${runs - failed} of ${runs} runs passed under ${burnerCount} burner(s) at ${share} of a core each\n`);
process.exit(failed === 0 ? 0 : 1);
