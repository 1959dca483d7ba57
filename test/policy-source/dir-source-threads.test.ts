// dir source threads › where DirPolicySource parses: a worker thread from workerMinBytes changed bytes, else the main thread yielding between documents, and back to the main thread when the worker fails.
import test from "ava";
import { createHook } from "node:async_hooks";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DirPolicySource, type DirSourceOptions } from "../../extproc/policy-source/dir-source.js";
import type { Dataplane } from "../../extproc/policy/documents/dataplane.js";
import { DOCUMENTS_PER_PAUSE } from "../../extproc/policy/documents/parse-simple.js";

const mtp = (name: string) => `type: MeshTrafficPermission\nmesh: default\nname: ${name}\nspec:\n  targetRef:\n    kind: Mesh\n  from:\n    - targetRef:\n        kind: Mesh\n      default:\n        action: Allow\n`;

/**
 * How many worker threads were started and how many times the event loop was yielded to (setImmediate) while `fn`
 * ran: async resources of type WORKER and Immediate created meanwhile (tests are serial: nothing else runs).
 */
async function counting(fn: () => Promise<unknown>): Promise<{ workers: number; yields: number }> {
  const seen = { workers: 0, yields: 0 };
  const hook = createHook({ init: (_id, type) => void (type === "WORKER" ? seen.workers++ : type === "Immediate" && seen.yields++) }).enable();
  try {
    await fn();
  } finally {
    hook.disable();
  }
  return seen;
}

function setup(t: import("ava").ExecutionContext, more: Partial<DirSourceOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "dir-source-threads-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const applied: string[][] = [];
  const warnings: Array<{ msg: string; obj: Record<string, unknown> }> = [];
  const log = { info: () => {}, warn: (obj: object, msg: string) => void warnings.push({ msg, obj: obj as Record<string, unknown> }), error: () => {} };
  const source = new DirPolicySource({ dir, apply: (p) => void applied.push(p.map((x) => x.name)), log, rescanIntervalMs: 0, watchedRescanIntervalMs: 0, ...more });
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return statSync(join(dir, name)).size;
  };
  return { dir, source, applied, warnings, write };
}

test.serial("dir source threads › given the default threshold, when a small file is read, then it is parsed on the main thread", async (t) => {
  const s = setup(t);
  s.write("a.yaml", mtp("a"));
  t.deepEqual(await counting(() => s.source.scan()).then((c) => c.workers), 0);
  t.deepEqual(s.applied, [["a"]]);
});

test.serial("dir source threads › given workerMinBytes equal to a new file's size, when scanned, then a worker parses it; a rescan that re-reads it unchanged starts none", async (t) => {
  const s = setup(t, { workerMinBytes: Buffer.byteLength(mtp("a")) });
  s.write("a.yaml", mtp("a"));
  t.is((await counting(() => s.source.scan())).workers, 1);
  t.deepEqual(s.applied, [["a"]]);
  // when rescanned: the file was read right after its write, so it is read again, but its bytes did not change
  t.is((await counting(() => s.source.scan())).workers, 0);
});

test.serial("dir source threads › given workerMinBytes 0 and nothing to read, when scanned, then no worker is started", async (t) => {
  const s = setup(t, { workerMinBytes: 0 });
  t.is((await counting(() => s.source.scan())).workers, 0);
  t.deepEqual(s.applied, [[]]);
});

test.serial("dir source threads › given a file of many documents parsed on the main thread, when scanned, then the event loop is yielded to between documents", async (t) => {
  const s = setup(t, { workerMinBytes: Infinity });
  const documents = 10 * DOCUMENTS_PER_PAUSE;
  s.write("a.yaml", Array.from({ length: documents }, (_, i) => mtp(`p-${i}`)).join("---\n"));
  const { workers, yields } = await counting(() => s.source.scan());
  t.is(workers, 0);
  t.true(yields >= documents / DOCUMENTS_PER_PAUSE - 1, `${yields} yields`);
  t.is(s.applied[0]?.length, documents);
});

for (const logged of [true, false]) {
  test.serial(`dir source threads › given jobs a worker cannot be sent${logged ? "" : " and no log"}, when scanned, then the files are parsed on the main thread${logged ? " and the failure is logged" : ""}`, async (t) => {
    // a dataplane with a function in it: the main thread selects with it, a worker cannot be given it (DataCloneError)
    const dataplane = { mesh: "default", name: "dp", proxyType: "Sidecar", inbounds: [{ name: "8080", port: 8080, tags: { "kuma.io/service": "backend" } }], describe: () => "dp" } as unknown as Dataplane;
    const s = setup(t, { workerMinBytes: 0, selectFor: () => dataplane, ...(logged ? {} : { log: undefined }) });
    s.write("a.yaml", mtp("a"));
    s.write("b.yaml", mtp("b"));
    t.deepEqual(await s.source.scan(), { files: 2, policies: 2, rejected: [], applied: true });
    t.deepEqual(s.applied, [["a", "b"]]);
    const failed = s.warnings.filter((w) => w.msg === "policy parse worker failed; parsing on the main thread");
    t.deepEqual(failed.map((w) => ({ files: w.obj.files, clone: /clone/i.test(String(w.obj.err)) })), logged ? [{ files: 2, clone: true }] : []);
  });
}
