// dir source timers › when DirPolicySource rescans: the safety and fallback rescan intervals, watch failures, the debounce of change events, and stop (timers recorded, fired by hand).
import test from "ava";
import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DirPolicySource, MAX_DEBOUNCE_MS, type DirSourceOptions } from "../../extproc/policy-source/dir-source.js";

const mtp = (name: string, action = "Allow") => `type: MeshTrafficPermission\nmesh: default\nname: ${name}\nspec:\n  targetRef:\n    kind: Mesh\n  from:\n    - targetRef:\n        kind: Mesh\n      default:\n        action: ${action}\n`;

interface Timer {
  kind: "interval" | "timeout";
  ms: number;
  fn: () => void;
  cleared: boolean;
}

/**
 * Runs `fn` with setInterval/clearInterval (and, with `timeouts`, setTimeout/clearTimeout and Date.now at `now`)
 * replaced by recorders that never fire on their own; stays in place until the promise `fn` returns settles (tests
 * here are serial, so nothing else runs meanwhile). Clears of timers not recorded go to the real functions.
 */
const recorded = new WeakMap<object, Timer>();
async function recording<T>(timers: Timer[], fn: () => T | Promise<T>, timeouts?: { now: number }): Promise<T> {
  const real = { setInterval, clearInterval, setTimeout, clearTimeout, now: Date.now };
  const start = (kind: Timer["kind"]) => (cb: () => void, ms: number) => {
    const timer: Timer = { kind, ms, fn: cb, cleared: false };
    timers.push(timer);
    const handle = { unref: () => handle, ref: () => handle, hasRef: () => false };
    recorded.set(handle, timer);
    return handle;
  };
  const clear = (realClear: (h: never) => void) => (h: object | undefined) => {
    const timer = h && recorded.get(h);
    if (timer) timer.cleared = true;
    else realClear(h as never);
  };
  globalThis.setInterval = start("interval") as unknown as typeof setInterval;
  globalThis.clearInterval = clear(real.clearInterval) as typeof clearInterval;
  if (timeouts) {
    globalThis.setTimeout = start("timeout") as unknown as typeof setTimeout;
    globalThis.clearTimeout = clear(real.clearTimeout) as typeof clearTimeout;
    Date.now = () => timeouts.now;
  }
  try {
    return await fn();
  } finally {
    Object.assign(globalThis, { setInterval: real.setInterval, clearInterval: real.clearInterval, setTimeout: real.setTimeout, clearTimeout: real.clearTimeout });
    Date.now = real.now;
  }
}

/** What fs.watch gives DirPolicySource, driven by the test: `change()` is an event, `fail()` an error. */
class FakeWatcher extends EventEmitter {
  closed = 0;
  change: () => void = () => {};
  close(): void {
    this.closed++;
  }
  fail(): void {
    this.emit("error", new Error("watch gone"));
  }
}

function setup(t: import("ava").ExecutionContext, more: Partial<DirSourceOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "dir-source-timers-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "a.yaml"), mtp("a"));
  const watcher = new FakeWatcher();
  const applied: string[][] = [];
  const warnings: Array<{ msg: string; obj: Record<string, unknown> }> = []; // about the watch
  const log = { info: () => {}, warn: (obj: object, msg: string) => void (msg.includes("watch") && warnings.push({ msg, obj: obj as Record<string, unknown> })), error: () => {} };
  const watchDir = (_dir: string, onChange: () => void) => ((watcher.change = onChange), watcher);
  const source = new DirPolicySource({ dir, apply: (p) => void applied.push(p.map((x) => `${x.name}:${x.spec.from?.[0]?.default?.action}`)), log, watchDir, workerMinBytes: Infinity, ...more });
  t.teardown(() => source.stop());
  return { dir, source, watcher, applied, warnings };
}

async function eventually(cond: () => boolean, timeoutMs = 5000): Promise<boolean> {
  for (const end = Date.now() + timeoutMs; !cond() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 5));
  return cond();
}

test.serial("dir source timers › given a watched directory, when started, its watch fails and it stops, then the safety rescan gives way to the fallback one, which stop clears", async (t) => {
  const s = setup(t, { watchedRescanIntervalMs: 1234, rescanIntervalMs: 56 });
  const timers: Timer[] = [];
  await recording(timers, () => s.source.start());
  t.deepEqual(timers.map(({ kind, ms, cleared }) => ({ kind, ms, cleared })), [{ kind: "interval", ms: 1234, cleared: false }]);
  // when the watch fails
  await recording(timers, () => s.watcher.fail());
  t.is(s.watcher.closed, 1);
  t.deepEqual(s.warnings.map((w) => ({ msg: w.msg, err: (w.obj.err as Error).message, dir: w.obj.dir })), [{ msg: "policy dir watch failed; relying on periodic rescan", err: "watch gone", dir: s.dir }]);
  t.deepEqual(timers.map(({ ms, cleared }) => ({ ms, cleared })), [{ ms: 1234, cleared: true }, { ms: 56, cleared: false }]);
  // then the fallback rescan picks up a change
  writeFileSync(join(s.dir, "a.yaml"), mtp("a", "Deny"));
  timers[1]!.fn();
  t.true(await eventually(() => s.applied.at(-1)?.[0] === "a:Deny"));
  // when stopped, then it is cleared
  await recording(timers, () => s.source.stop());
  t.deepEqual(timers.map(({ cleared }) => cleared), [true, true]);
});

test.serial("dir source timers › given rescanIntervalMs 0, when the watch fails, then no rescan timer is left", async (t) => {
  const s = setup(t, { watchedRescanIntervalMs: 1234, rescanIntervalMs: 0 });
  const timers: Timer[] = [];
  await recording(timers, () => s.source.start());
  await recording(timers, () => s.watcher.fail());
  t.deepEqual(timers.map(({ ms, cleared }) => ({ ms, cleared })), [{ ms: 1234, cleared: true }]);
});

test.serial("dir source timers › given a stopped source without a log, when its watch still reports errors, then nothing throws and no rescan timer starts", async (t) => {
  const s = setup(t, { watchedRescanIntervalMs: 1234, rescanIntervalMs: 56, log: undefined });
  const timers: Timer[] = [];
  await recording(timers, () => s.source.start());
  await s.source.stop();
  await recording(timers, () => {
    t.notThrows(() => s.watcher.fail());
    t.notThrows(() => s.watcher.fail());
  });
  t.deepEqual(timers.map(({ ms, cleared }) => ({ ms, cleared })), [{ ms: 1234, cleared: true }]);
});

test.serial("dir source timers › given a directory that cannot be watched, when started, then a warning says so and rescans run every rescanIntervalMs", async (t) => {
  const s = setup(t, { watchedRescanIntervalMs: 1234, rescanIntervalMs: 56, watchDir: () => { throw new Error("ENOSPC: inotify watches exhausted"); } });
  const timers: Timer[] = [];
  await recording(timers, () => s.source.start());
  t.deepEqual(s.warnings.map((w) => ({ msg: w.msg, err: (w.obj.err as Error).message, dir: w.obj.dir })), [{ msg: "cannot watch policy dir; relying on periodic rescan", err: "ENOSPC: inotify watches exhausted", dir: s.dir }]);
  t.deepEqual(timers.map(({ ms, cleared }) => ({ ms, cleared })), [{ ms: 56, cleared: false }]);
});

test.serial("dir source timers › given change events, then a rescan waits debounceMs after the last of them, but no longer than MAX_DEBOUNCE_MS after the first", async (t) => {
  const s = setup(t, { debounceMs: 20, watchedRescanIntervalMs: 0 });
  await s.source.start();
  const timers: Timer[] = [];
  const eventAt = (now: number) => recording(timers, () => s.watcher.change(), { now });
  await eventAt(1000);
  t.deepEqual(timers.map(({ kind, ms }) => ({ kind, ms })), [{ kind: "timeout", ms: 20 }], "the quiet time after a first event");
  await eventAt(1010);
  t.deepEqual(timers.map(({ ms, cleared }) => ({ ms, cleared })), [{ ms: 20, cleared: true }, { ms: 20, cleared: false }], "a second event restarts the wait");
  await eventAt(1000 + MAX_DEBOUNCE_MS - 10);
  t.is(timers.at(-1)?.ms, 10, "events that keep coming: due MAX_DEBOUNCE_MS after the first");
  await eventAt(1000 + MAX_DEBOUNCE_MS + 10);
  t.is(timers.at(-1)?.ms, 0);
  t.deepEqual(timers.map(({ cleared }) => cleared), [true, true, true, false]);
  // when the rescan runs, then the next event starts a new burst
  writeFileSync(join(s.dir, "a.yaml"), mtp("a", "Deny"));
  timers.at(-1)!.fn();
  t.true(await eventually(() => s.applied.at(-1)?.[0] === "a:Deny"));
  await eventAt(5000);
  t.is(timers.at(-1)?.ms, 20);
});

test.serial("dir source timers › given a quiet time longer than MAX_DEBOUNCE_MS, then a first event waits all of it", async (t) => {
  const s = setup(t, { debounceMs: MAX_DEBOUNCE_MS + 50, watchedRescanIntervalMs: 0 });
  await s.source.start();
  const timers: Timer[] = [];
  await recording(timers, () => s.watcher.change(), { now: 1000 });
  t.is(timers[0]?.ms, MAX_DEBOUNCE_MS + 50);
});

test.serial("dir source timers › given a rescan due after an event, when the source stops, then it is cancelled, and later events schedule none", async (t) => {
  const s = setup(t, { debounceMs: 20, watchedRescanIntervalMs: 0 });
  await s.source.start();
  const timers: Timer[] = [];
  await recording(timers, () => s.watcher.change(), { now: 1000 });
  await recording(timers, () => s.source.stop(), { now: 1005 });
  t.deepEqual(timers.map(({ ms, cleared }) => ({ ms, cleared })), [{ ms: 20, cleared: true }]);
  await recording(timers, () => s.watcher.change(), { now: 1010 });
  t.is(timers.length, 1);
});
