// The slow path of Stryker's command-runner command (cwd: the sandbox; scripts/stryker-ask.sh hands over to it when the
// daemon is not up yet, for --verify-every and on any failure). In the dry run (no mutant) it runs every test file of the area
// under AVA. Per mutant (__STRYKER_ACTIVE_MUTANT__) it asks the harness's daemon (scripts/stryker-daemon.mjs, started
// here by the first mutant) and exits 1 when a test killed the mutant, 0 when it survived; a mutant no test reached
// (not in .stryker-coverage/planned.json) survives at once.
// If the daemon cannot answer, the mutant's covering test files run under AVA instead, one at a time. With
// STRYKER_VERIFY_EVERY=N (mutation:stryker --verify-every N) every Nth mutant also runs under AVA, and both verdicts are
// appended to STRYKER_VERIFY_LOG: the harness checked against the real runner.
// Usage: node scripts/stryker-dispatch.mjs AREA
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { STRYKER_AREAS } from "./stryker-areas.mjs";
import { planFor } from "./stryker-coverage.mjs";

const area = STRYKER_AREAS[process.argv[2]];
if (!area) {
  console.error(`stryker-dispatch: unknown area ${JSON.stringify(process.argv[2])}`);
  process.exit(2);
}
const ava = (files) =>
  spawnSync(process.execPath, ["node_modules/ava/entrypoints/cli.mjs", "--no-worker-threads", "--fail-fast", ...files], { stdio: "inherit", env: { ...process.env, CI: "1", FORCE_COLOR: "0" } }).status ?? 1;
const mutant = process.env.__STRYKER_ACTIVE_MUTANT__;
if (!mutant) process.exit(ava(area.tests));
if (!JSON.parse(readFileSync(".stryker-coverage/planned.json", "utf8")).includes(mutant)) {
  console.log(`mutant ${mutant}: survived (no test reaches it)`);
  process.exit(0);
}

// One daemon per sandbox; a unix socket path must stay short, so it lives in the temp directory, named by the sandbox.
const socketPath = join(tmpdir(), `meshext-stryker-${createHash("sha256").update(resolve(".")).digest("hex").slice(0, 12)}.sock`);
const ask = () =>
  new Promise((res, rej) => {
    const socket = connect(socketPath);
    let text = "";
    socket.on("connect", () => socket.write(`${JSON.stringify({ mutant })}\n`));
    socket.on("data", (c) => (text += c));
    socket.on("end", () => (text.includes("\n") ? res(JSON.parse(text)) : rej(new Error("the daemon closed without an answer"))));
    socket.on("error", rej);
  });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function verdict() {
  try {
    return await ask();
  } catch (error) {
    if (error.code !== "ENOENT" && error.code !== "ECONNREFUSED") throw error;
  }
  // No daemon yet: the first dispatcher to take the lock starts it; every one then waits for its socket.
  try {
    closeSync(openSync(".stryker-coverage/daemon.lock", "wx"));
    const log = openSync(".stryker-coverage/daemon.log", "a");
    spawn(process.execPath, ["scripts/stryker-daemon.mjs", socketPath], { detached: true, stdio: ["ignore", log, log] }).unref();
  } catch (error) {
    if (error.code !== "EEXIST") throw error;
  }
  for (let waitedMs = 0; waitedMs < 180_000; waitedMs += 200) {
    await sleep(200);
    if (!existsSync(socketPath)) continue;
    try {
      return await ask();
    } catch (error) {
      if (error.code !== "ENOENT" && error.code !== "ECONNREFUSED") throw error;
    }
  }
  throw new Error(`no daemon on ${socketPath} after 180 s; see .stryker-coverage/daemon.log`);
}

/** The mutant's covering test files under AVA, one at a time until one fails: whether AVA kills it. */
function avaKills() {
  const { map, files } = JSON.parse(readFileSync(".stryker-coverage/map.json", "utf8"));
  const plan = planFor(map, files, mutant);
  return plan.kind !== "none" && plan.files.some((file) => ava([file]) !== 0);
}

try {
  const answer = await verdict();
  if (answer.error) throw new Error(answer.error);
  console.log(`mutant ${mutant}: ${answer.killed ? `killed by ${answer.test ?? "?"} (${answer.how}): ${String(answer.message ?? "").split("\n")[0].slice(0, 300)}` : `survived (${answer.how})`}`);
  // --verify-every N: every Nth mutant runs under AVA too, and the two verdicts go to the area's verify log.
  const every = Number(process.env.STRYKER_VERIFY_EVERY ?? 0);
  if (every > 0 && Number(mutant) % every === 0 && process.env.STRYKER_VERIFY_LOG) {
    appendFileSync(process.env.STRYKER_VERIFY_LOG, `${JSON.stringify({ mutant, harness: answer.killed, ava: avaKills(), test: answer.test, how: answer.how })}\n`);
  }
  process.exit(answer.killed ? 1 : 0);
} catch (error) {
  // The harness failed, not the mutant: run its covering files under AVA, the slow way, for a true verdict.
  console.error(`stryker-dispatch: mutant ${mutant}: harness: ${error.message}; running its test files under AVA`);
  process.exit(avaKills() ? 1 : 0);
}
