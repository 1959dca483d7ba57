// drain › signals: SIGTERM, SIGINT and SIGUSR2 reach the controller while the handlers are installed, and
// nothing does once they are removed, by hand or when the drain is done.
import test from "ava";
import { EventEmitter } from "node:events";
import { DRAIN_SIGNALS, installDrainSignals, untilDrained } from "../../extproc/drain/signals.js";

/** A process stand-in whose signals are events, and a target that records what reached it. */
function fixture() {
  const proc = new EventEmitter();
  const received: string[] = [];
  return { proc: proc as unknown as Pick<NodeJS.Process, "on" | "off">, emit: (s: string) => proc.emit(s), listeners: () => DRAIN_SIGNALS.reduce((n, s) => n + proc.listenerCount(s), 0), received, target: { signal: (name: string) => void received.push(name) } };
}

test("drain signals › given the handlers installed, when each drain signal comes, then the controller hears it; once removed, it does not", (t) => {
  const f = fixture();
  const uninstall = installDrainSignals(f.target, f.proc);
  for (const s of ["SIGTERM", "SIGINT", "SIGUSR2", "SIGHUP"]) f.emit(s);
  t.deepEqual(f.received, ["SIGTERM", "SIGINT", "SIGUSR2"]);
  uninstall();
  f.emit("SIGTERM");
  t.deepEqual(f.received, ["SIGTERM", "SIGINT", "SIGUSR2"]);
  t.is(f.listeners(), 0);
});

test("drain signals › given a drain awaited with untilDrained, when it is done, then its result comes back and the handlers are gone", async (t) => {
  const f = fixture();
  let finish!: (v: string) => void;
  const waiting = untilDrained({ ...f.target, done: new Promise<string>((r) => (finish = r)) }, f.proc);
  f.emit("SIGTERM");
  t.is(f.listeners(), 3);
  finish("exit 0");
  t.is(await waiting, "exit 0");
  t.deepEqual(f.received, ["SIGTERM"]);
  t.is(f.listeners(), 0);
});
