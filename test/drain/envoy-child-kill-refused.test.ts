// drain › an Envoy child our signal cannot reach (kill fails with EPERM) is still running: the process error is logged, and neither `running` nor `exited` says it is gone. Real processes: a host without CAP_KILL (setpriv) runs EnvoyChild on a child that switched to another user.
import test from "ava";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

const ENVOY_CHILD = new URL("../../extproc/drain/envoy-child.js", import.meta.url).href;
const NOBODY = 65534;

/**
 * The host: starts an "Envoy" that switches to uid 65534, waits until it has, stops it (SIGTERM: refused with EPERM,
 * the host lacks CAP_KILL) and prints, as JSON lines, the child's pid, each warning logged, and then whether it is
 * running and whether `exited` resolved, once the turn of the refused kill is over.
 */
const HOST = `
const { EnvoyChild } = await import(${JSON.stringify(ENVOY_CHILD)});
const { readFileSync } = await import("node:fs");
const out = (line) => process.stdout.write(JSON.stringify(line) + "\\n");
const log = { debug() {}, info() {}, warn: (fields, msg) => out({ warn: msg, ...fields }) };
const envoy = EnvoyChild.start(["setpriv", "--reuid=${NOBODY}", "--regid=${NOBODY}", "--clear-groups", "sleep", "60"], { killGraceMs: 60000, log });
out({ pid: envoy.pid });
let exited = null;
void envoy.exited.then((e) => (exited = e));
const uid = () => { try { return Number(/^Uid:\\s+(\\d+)/m.exec(readFileSync("/proc/" + envoy.pid + "/status", "utf8"))[1]); } catch { return -1; } };
for (const deadline = Date.now() + 10000; uid() !== ${NOBODY} && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 10));
out({ uid: uid() });
void envoy.stop();
await new Promise((r) => setImmediate(r));
out({ running: envoy.running, exited });
process.exit(0);
`;

/** Runs the host without CAP_KILL; resolves with the JSON lines it printed. */
function runHost(t: { teardown(fn: () => void): void }): Promise<Array<Record<string, unknown>>> {
  const host = spawn("setpriv", ["--inh-caps=-kill", "--bounding-set=-kill", "--", process.execPath, "--input-type=module", "-e", HOST], { stdio: ["ignore", "pipe", "inherit"] });
  let text = "";
  host.stdout.on("data", (d: Buffer) => (text += d));
  const lines = () => text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  // The "Envoy" runs as another user and outlives the host: this process (root, with CAP_KILL) ends it by its pid.
  t.teardown(() => {
    const pid = lines().find((l) => typeof l.pid === "number")?.pid as number | undefined;
    if (pid !== undefined && isRunning(pid)) process.kill(pid, "SIGKILL");
  });
  // Its last line, or its exit when it fails first ('close' never comes: the "Envoy" keeps the host's stdout open).
  return new Promise((resolve) => {
    host.stdout.on("data", () => lines().some((l) => "running" in l) && resolve(lines()));
    host.once("exit", (code) => code !== 0 && resolve(lines()));
  });
}

const isRunning = (pid: number) => {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
};

test("envoy child › given an Envoy child the stop signal cannot reach (EPERM), when stopped, then the error is logged and it still counts as running, not exited", async (t) => {
  // Given a host without CAP_KILL whose Envoy child now runs as another user; when the host stops it
  const lines = await runHost(t);
  const pid = lines.find((l) => typeof l.pid === "number")?.pid as number;
  t.deepEqual(lines.find((l) => "uid" in l), { uid: NOBODY }, "the child switched users before the stop");
  // Then the refused SIGTERM is logged as a process error
  const warning = lines.find((l) => l.warn === "envoy: process error");
  t.truthy(warning);
  t.regex(String(warning?.err), /EPERM/);
  // and the Envoy is not taken for exited (no made-up exit 127): it is still running, as the system says too
  t.deepEqual(lines.at(-1), { running: true, exited: null });
  t.true(isRunning(pid));
});
