// drain › Envoy as a child process: started in its own process group, stopped with SIGTERM and, past the
// grace, SIGKILL; a command that cannot start reads as exit 127; exit statuses as a shell gives them. Real
// child processes (node scripts standing in for Envoy).
import test from "ava";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EnvoyChild, exitStatusOf } from "../../extproc/drain/envoy-child.js";

/** A log that keeps each line's level, message and fields. */
function recordingLog() {
  const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
  const at = (level: string) => (fields: object, msg: string) => void lines.push({ level, msg, fields: fields as Record<string, unknown> });
  return { lines, log: { debug: at("debug"), info: at("info"), warn: at("warn") } };
}
/** A stand-in Envoy that runs until killed; with `ignoreTerm` it outlives SIGTERM, and creates `readyFile` once its handler is on. */
const standIn = (ignoreTerm = false, readyFile?: string) => [
  process.execPath,
  "-e",
  `${ignoreTerm ? "process.on('SIGTERM', () => {});" : ""} ${readyFile ? `require("fs").writeFileSync(${JSON.stringify(readyFile)}, "");` : ""} setInterval(() => {}, 1000);`,
];
/** A path the stand-in creates once it is ready, and a wait for it (the child's start-up is node's: slow on a loaded machine). */
function readiness(t: import("ava").ExecutionContext) {
  const dir = mkdtempSync(join(tmpdir(), "meshext-envoy-child-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "ready");
  const ready = async () => {
    const deadline = Date.now() + 20_000;
    while (!existsSync(file) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    t.true(existsSync(file), "the stand-in started");
  };
  return { file, ready };
}
/** The process group of `pid` (field 5 of /proc/PID/stat). */
const processGroup = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[2]);

test("envoy child › given a running stand-in, when stopped, then it gets SIGTERM and exits by it, in its own process group", async (t) => {
  const { lines, log } = recordingLog();
  const envoy = EnvoyChild.start(standIn(), { killGraceMs: 5000, log });
  t.true(envoy.running);
  t.is(processGroup(envoy.pid!), envoy.pid!, "its own group: a signal to ours does not reach it");
  t.not(processGroup(envoy.pid!), processGroup(process.pid));
  const stopping = envoy.stop();
  t.is(envoy.stop(), stopping, "stop is idempotent");
  const exit = await stopping;
  t.deepEqual(exit, { code: null, signal: "SIGTERM" });
  t.false(envoy.running);
  t.is(await envoy.stop(), exit, "stopping an exited Envoy answers its exit");
  t.deepEqual(lines.map((l) => [l.level, l.msg]), [["debug", "envoy spawned"], ["info", "envoy exited"]]);
  t.like(lines[0]!.fields, { pid: envoy.pid, command: standIn().join(" ") });
  t.like(lines[1]!.fields, { code: null, signal: "SIGTERM", pid: envoy.pid });
});

test("envoy child › given a stand-in that ignores SIGTERM, when stopped, then SIGKILL follows after the grace, with a warning", async (t) => {
  const { lines, log } = recordingLog();
  const { file, ready } = readiness(t);
  const envoy = EnvoyChild.start(standIn(true, file), { killGraceMs: 300, log });
  await ready(); // its SIGTERM handler is installed
  const t0 = Date.now();
  const exit = await envoy.stop();
  const ms = Date.now() - t0;
  t.deepEqual(exit, { code: null, signal: "SIGKILL" });
  t.true(ms >= 280 && ms < 3000, `killed after ${ms} ms`);
  t.deepEqual(lines.filter((l) => l.level === "warn").map((l) => [l.msg, l.fields.killGraceMs]), [["envoy still running after SIGTERM: SIGKILL", 300]]);
});

test("envoy child › given a stand-in that exits on SIGTERM, then no SIGKILL comes after", async (t) => {
  const { lines, log } = recordingLog();
  const envoy = EnvoyChild.start(standIn(), { killGraceMs: 200, log });
  await envoy.stop();
  await new Promise((r) => setTimeout(r, 400));
  t.deepEqual(lines.filter((l) => l.level === "warn"), [], "the grace timer was cleared");
});

test("envoy child › killNow sends SIGKILL to a running Envoy and nothing to an exited one", async (t) => {
  const envoy = EnvoyChild.start(standIn(true), { killGraceMs: 5000 });
  envoy.killNow();
  t.deepEqual(await envoy.exited, { code: null, signal: "SIGKILL" });
  t.notThrows(() => envoy.killNow());
});

test("envoy child › given a command that cannot be started, then it has exited with 127, with a warning", async (t) => {
  const { lines, log } = recordingLog();
  const envoy = EnvoyChild.start(["/nonexistent/envoy", "-c", "x.yaml"], { killGraceMs: 100, log });
  t.deepEqual(await envoy.exited, { code: 127, signal: null });
  t.false(envoy.running);
  t.deepEqual(lines.filter((l) => l.level === "warn").map((l) => l.msg), ["envoy: process error"]);
  t.regex(String(lines.find((l) => l.level === "warn")!.fields.err), /ENOENT/);
  t.throws(() => EnvoyChild.start([], { killGraceMs: 100 }), { message: "no Envoy command given" });
});

test("envoy child › exit statuses read as a shell's: the code, 128 + the signal's number, or 1", (t) => {
  t.is(exitStatusOf({ code: 3, signal: null }), 3);
  t.is(exitStatusOf({ code: 0, signal: null }), 0);
  t.is(exitStatusOf({ code: null, signal: "SIGTERM" }), 143);
  t.is(exitStatusOf({ code: null, signal: "SIGKILL" }), 137);
  t.is(exitStatusOf({ code: null, signal: null }), 1);
});

test("envoy child › given no log, when the command cannot be started, then it has exited with 127 all the same", async (t) => {
  const envoy = EnvoyChild.start(["/nonexistent/envoy"], { killGraceMs: 100 });
  t.deepEqual(await envoy.exited, { code: 127, signal: null });
});

test("envoy child › given no log and a stand-in that ignores SIGTERM, when stopped, then SIGKILL follows after the grace all the same", async (t) => {
  const { file, ready } = readiness(t);
  const envoy = EnvoyChild.start(standIn(true, file), { killGraceMs: 100 });
  await ready(); // its SIGTERM handler is installed
  t.deepEqual(await envoy.stop(), { code: null, signal: "SIGKILL" });
});
