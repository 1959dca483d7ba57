// The mutation harness's daemon (cwd: Stryker's sandbox), started by the first mutant's scripts/stryker-dispatch.mjs:
// keeps `concurrency` workers (scripts/stryker-worker.mjs) with the area's test files imported, and answers each
// dispatcher's "mutant N?" on a unix socket with killed or survived, following planFor (scripts/stryker-coverage.mjs).
// A kill is believed only when the killing test passes again unmutated in the same worker; otherwise the worker is
// replaced and the mutant runs again in a fresh one. A survivor whose code the warm worker never ran (a memo filled by
// an earlier run) runs again in a worker started with the mutant on. A hung run is killed with its process group (a timeout: killed).
// Listens on the unix socket (scripts/stryker-dispatch.mjs) and on a TCP port of 127.0.0.1 written to
// .stryker-coverage/daemon.port (scripts/stryker-ask.sh: bash can reach TCP, not unix sockets).
// Exits when idle for IDLE_EXIT_MS or when its sandbox is gone.
// Usage: node scripts/stryker-daemon.mjs SOCKET
import { fork } from "node:child_process";
import { existsSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { planFor, testTimeoutMs } from "./stryker-coverage.mjs";

const IDLE_EXIT_MS = 90_000;
const RUNS_PER_WORKER = 400;
const START_ALLOWANCE_MS = 60_000;
const [socketPath] = process.argv.slice(2);
const { area, tests: areaTests, map, files, concurrency } = JSON.parse(readFileSync(".stryker-coverage/map.json", "utf8"));
const log = openSync(".stryker-coverage/workers.log", "a");
const say = (line) => process.stderr.write(`stryker-daemon ${new Date().toISOString()} ${line}\n`);

/** A worker process: resolves `ready` once its test files are imported; `run` sends one message and awaits the answer. */
function startWorker(testFiles, mutant) {
  const env = { ...process.env, CI: "1", FORCE_COLOR: "0" };
  delete env.__STRYKER_ACTIVE_MUTANT__;
  if (mutant !== undefined) env.__STRYKER_ACTIVE_MUTANT__ = mutant;
  const child = fork("scripts/stryker-worker.mjs", testFiles, { execArgv: ["--import=./scripts/stryker-ava-loader.mjs"], env, detached: true, stdio: ["ignore", log, log, "ipc"] });
  const pending = new Map();
  let nextId = 0;
  let exited;
  const worker = {
    runs: 0,
    isReady: false,
    ready: new Promise((resolve, reject) => {
      child.once("message", (m) => (m.ready !== undefined ? resolve((worker.isReady = true)) : reject(new Error(`unexpected first message ${JSON.stringify(m)}`))));
      child.once("exit", (code, signal) => reject(new Error(`worker exited while importing (${code ?? signal}); see .stryker-coverage/workers.log`)));
    }),
    run(message, hardTimeoutMs) {
      const id = nextId++;
      worker.runs++;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          worker.kill();
          resolve({ killed: true, timedOut: true, failed: { message: `no answer in ${hardTimeoutMs} ms` } });
        }, hardTimeoutMs);
        pending.set(id, (answer) => {
          clearTimeout(timer);
          resolve(answer);
        });
        if (exited) pending.get(id)({ spoiled: `worker had exited (${exited})` });
        else child.send({ ...message, id });
      });
    },
    kill() {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    },
  };
  child.on("message", (m) => {
    if (m.id !== undefined) {
      pending.get(m.id)?.(m);
      pending.delete(m.id);
    }
  });
  child.on("exit", (code, signal) => {
    exited = `${code ?? signal}`;
    for (const [id, answer] of pending) {
      pending.delete(id);
      answer({ spoiled: `worker exited (${exited})` });
    }
  });
  worker.ready.catch(() => {});
  return worker;
}

// The warm pool: idle workers (one more than can be busy, so a replaced worker's imports overlap other runs), and the
// dispatchers waiting for one. A ready worker is taken before one still importing.
const idle = [];
const waiting = [];
const freshWorker = () => startWorker(areaTests);
const take = async () => {
  const readyAt = idle.findIndex((w) => w.isReady);
  const w = (readyAt >= 0 ? idle.splice(readyAt, 1)[0] : idle.shift()) ?? (await new Promise((resolve) => waiting.push(resolve)));
  await w.ready;
  return w;
};
const give = (w) => {
  if (w.runs >= RUNS_PER_WORKER) {
    w.kill();
    w = freshWorker();
  }
  const next = waiting.shift();
  if (next) next(w);
  else idle.push(w);
};
const replace = (w) => {
  w.kill();
  give(freshWorker());
};
for (let i = 0; i <= concurrency; i++) idle.push(freshWorker());

const runMessage = (mutant, plan) => ({ mutant, tests: plan.tests, hitLimit: plan.hitLimit, timeoutsMs: plan.tests.map((t) => testTimeoutMs(map.tests, t)) });
const hardTimeoutOf = (message) => message.timeoutsMs.reduce((a, b) => a + b, 0) + 10_000;

/** Runs the mutant's tests in a worker started with the mutant on, importing only the files those tests are in. */
async function inFreshWorker(mutant, plan, how) {
  const w = startWorker(["--lazy", ...plan.files], mutant);
  try {
    await w.ready;
  } catch (error) {
    w.kill();
    return { killed: true, how, message: `the test files failed to import with the mutant on: ${error.message}` };
  }
  const message = runMessage(mutant, plan);
  const answer = await w.run(message, hardTimeoutOf(message) + START_ALLOWANCE_MS);
  w.kill();
  return { killed: Boolean(answer.killed || answer.spoiled), how, test: answer.failed?.test, message: answer.failed?.message ?? answer.spoiled };
}

/** The verdict for one mutant: { killed, how, test?, message? }. */
async function verdict(mutant) {
  const plan = planFor(map, files, mutant);
  if (plan.kind === "none") return { killed: false, how: "no test reaches it" };
  if (plan.kind === "fresh") return inFreshWorker(mutant, plan, "static, fresh worker");
  for (let attempt = 0; ; attempt++) {
    // A second attempt runs in a worker no mutant has run in.
    const w = attempt === 0 ? await take() : freshWorker();
    if (attempt > 0) await w.ready;
    const message = runMessage(mutant, plan);
    const answer = await w.run(message, hardTimeoutOf(message));
    if (answer.error) {
      give(w);
      throw new Error(answer.error);
    }
    if (answer.spoiled) {
      say(`mutant ${mutant}: worker spoiled (${answer.spoiled.split("\n")[0]}); replaced, run again`);
      replace(w);
      if (attempt < 2) continue;
      return { killed: true, how: "warm worker", message: answer.spoiled };
    }
    if (answer.timedOut) {
      // No answer at all: the worker is stuck (an endless synchronous loop the hit limit did not stop).
      replace(w);
      return { killed: true, how: "timeout", message: answer.failed?.message };
    }
    if (answer.killed && !answer.cleanAfter) {
      // The killing test fails without the mutant too: the worker's state is spoiled. On a first attempt that may be an
      // earlier mutant's doing, so a fresh worker runs this one again; a fresh worker's kill stands.
      say(`mutant ${mutant}: ${answer.failed.test} also fails unmutated after it; worker replaced${attempt === 0 ? ", run again" : ""}`);
      replace(w);
      if (attempt === 0) continue;
    } else give(w);
    if (!answer.killed && (answer.hits === 0 || answer.hits < (map.mutants[mutant]?.hits ?? 0))) {
      // The coverage run saw these tests reach the mutant, here they did not, or less often: an earlier run filled a
      // module-level memo, so some of its code did not run again (or it ran only in a child process). Only a worker
      // started with the mutant on measures it.
      return inFreshWorker(mutant, plan, `${answer.hits === 0 ? "not reached" : "reached less"} in a warm worker, fresh worker`);
    }
    const how = `${attempt === 0 ? "warm worker" : "fresh worker"}${answer.failed?.timedOut ? ", test timed out" : ""}`;
    return { killed: answer.killed, how, test: answer.failed?.test, message: answer.failed?.message };
  }
}

let active = 0;
let lastActivity = Date.now();
const answerMutant = (socket) => {
  let buffered = "";
  socket.on("data", async (chunk) => {
    buffered += chunk;
    if (!buffered.includes("\n")) return;
    const { mutant } = JSON.parse(buffered.slice(0, buffered.indexOf("\n")));
    active++;
    const startedMs = Date.now();
    try {
      const answer = await verdict(String(mutant));
      say(`mutant ${mutant}: ${answer.killed ? "killed" : "survived"} (${answer.how}) in ${Date.now() - startedMs} ms`);
      socket.end(`${JSON.stringify(answer)}\n`);
    } catch (error) {
      socket.end(`${JSON.stringify({ error: String(error?.message ?? error) })}\n`);
    } finally {
      active--;
      lastActivity = Date.now();
    }
  });
  socket.on("error", () => {});
};
const PORT_FILE = ".stryker-coverage/daemon.port";
const server = createServer(answerMutant);
const tcp = createServer(answerMutant);
rmSync(socketPath, { force: true });
server.listen(socketPath, () => say(`area ${area}: ${concurrency} workers, listening on ${socketPath}`));
tcp.listen(0, "127.0.0.1", () => {
  writeFileSync(`${PORT_FILE}.tmp`, String(tcp.address().port));
  renameSync(`${PORT_FILE}.tmp`, PORT_FILE); // whole or absent for a reader
  say(`and on 127.0.0.1:${tcp.address().port}`);
});

const shutdown = (why) => {
  say(`exiting: ${why}`);
  for (const w of idle) w.kill();
  server.close();
  tcp.close();
  rmSync(socketPath, { force: true });
  rmSync(PORT_FILE, { force: true });
  rmSync(".stryker-coverage/daemon.lock", { force: true });
  process.exit(0);
};
setInterval(() => {
  if (!existsSync(".stryker-coverage/map.json")) shutdown("the sandbox is gone");
  if (active === 0 && Date.now() - lastActivity > IDLE_EXIT_MS) shutdown(`idle for ${IDLE_EXIT_MS} ms`);
}, 2000).unref();
process.on("SIGTERM", () => shutdown("SIGTERM"));
