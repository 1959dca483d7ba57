// Following --dataplane-file: a changed Dataplane is handed on, an unreadable, invalid or other-mesh one is kept out with a warning, an unchanged one does nothing.
import test from "ava";
import { mkdtempSync, rmSync, statSync, unwatchFile, watchFile, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dataplaneFromObject, type Dataplane } from "../../extproc/policy/documents/dataplane.js";
import { watchDataplaneFile } from "../../extproc/policy-source/dataplane-file-watch.js";
import { eventually } from "../control-plane/helpers.js";

const doc = (service: string, mesh = "default") => ({
  type: "Dataplane",
  mesh,
  name: "orders-1",
  networking: { address: "127.0.0.1", inbound: [{ port: 8080, tags: { "kuma.io/service": service } }] },
});

function follow(t: import("ava").ExecutionContext, first: Record<string, unknown>) {
  const dir = mkdtempSync(join(tmpdir(), "meshext-dp-watch-"));
  const file = join(dir, "dp.json");
  writeFileSync(file, JSON.stringify(first));
  const changes: Dataplane[] = [];
  const warned: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  const infos: string[] = [];
  const infoObjs: Array<Record<string, unknown>> = [];
  const stop = watchDataplaneFile({
    file,
    intervalMs: 10,
    current: dataplaneFromObject(first).dataplane!,
    onChange: async (dp) => void changes.push(dp),
    log: { info: (obj, msg) => void (infos.push(msg), infoObjs.push(obj as Record<string, unknown>)), warn: (obj, msg) => void warned.push({ obj: obj as Record<string, unknown>, msg }) },
  });
  t.teardown(() => {
    stop();
    rmSync(dir, { recursive: true, force: true });
  });
  // Each write is padded to a new size, so the stat poll sees every write even within one mtime tick.
  let n = 0;
  const write = (value: unknown) => writeFileSync(file, (typeof value === "string" ? value : JSON.stringify(value)) + " ".repeat(++n));
  // The poll takes its first stat asynchronously, and a write before it is the baseline, not a change: write again
  // until the watcher has acted on it (rewriting the same content is never a second change).
  const writeUntil = async (value: unknown, seen: () => boolean) => {
    for (const end = Date.now() + 5000; Date.now() < end; ) {
      write(value);
      if (await eventually(seen, 200, 10)) return true;
    }
    return false;
  };
  // Writes and waits until the stat poll has seen that write: watchFile shares one poller per file, and the
  // watcher's listener was added first, so by the time this one runs the watcher has queued its check. The poller
  // does not keep the process alive (persistent: false), so a deadline timer does while waiting: without one, a
  // process with nothing else to do ended before the poll came round.
  const writeSeen = (value: unknown) =>
    new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => {
        unwatchFile(file, seen);
        reject(new Error("the stat poll did not see the write within 5 s"));
      }, 5000);
      const seen = (curr: { size: number }) => {
        if (curr.size !== statSync(file).size) return;
        clearTimeout(deadline);
        unwatchFile(file, seen);
        resolve();
      };
      watchFile(file, { interval: 10, persistent: false }, seen);
      write(value);
    });
  return { file, changes, warned, infos, infoObjs, stop, write, writeUntil, writeSeen };
}

test("dataplane file › given a followed file, when its tags change, then the new Dataplane is handed on once and logged", async (t) => {
  const f = follow(t, doc("orders"));
  t.true(await f.writeUntil(doc("orders-v2"), () => f.changes.length === 1));
  t.deepEqual(f.changes[0]!.inbounds[0]!.tags, { "kuma.io/service": "orders-v2" });
  t.deepEqual(f.infos, ["dataplane changed; re-selecting policies"]);
  t.deepEqual(f.warned, []);
});

test("dataplane file › given a followed file, when it is rewritten with the same Dataplane, then nothing is handed on", async (t) => {
  const f = follow(t, doc("orders"));
  t.true(await f.writeUntil(doc("orders-v2"), () => f.changes.length === 1));
  // the watcher is polling now: the same Dataplane again (new bytes, same resource), then a real change
  f.write(doc("orders-v2"));
  f.write(doc("orders-v2"));
  t.true(await f.writeUntil(doc("orders-v3"), () => f.changes.length >= 2));
  t.deepEqual(f.changes.map((c) => c.inbounds[0]!.tags["kuma.io/service"]), ["orders-v2", "orders-v3"], "only the real changes");
});

test("dataplane file › given a followed file, when it becomes invalid, then the current Dataplane is kept with a warning naming the file", async (t) => {
  const f = follow(t, doc("orders"));
  t.true(await f.writeUntil("{ not json", () => f.warned.length >= 1));
  t.is(f.warned[0]!.msg, "dataplane file unreadable or invalid; keeping the current dataplane");
  t.is(f.warned[0]!.obj.file, f.file);
  t.deepEqual(f.changes, []);
  // and a later valid change is still followed
  t.true(await f.writeUntil(doc("orders-v3"), () => f.changes.length === 1));
});

test("dataplane file › given a followed file, when it names another mesh, then a restart is asked for and the current Dataplane is kept", async (t) => {
  const f = follow(t, doc("orders"));
  t.true(await f.writeUntil(doc("orders", "other"), () => f.warned.length >= 1));
  t.is(f.warned[0]!.msg, "dataplane file moved to another mesh; a restart is needed, keeping the current dataplane");
  t.like(f.warned[0]!.obj, { mesh: "other", current: "default" });
  t.deepEqual(f.changes, []);
  // the current one is still "default": going back to it with new tags is a change
  t.true(await f.writeUntil(doc("orders-v2"), () => f.changes.length === 1));
  t.is(f.changes[0]!.mesh, "default");
});

test("dataplane file › given a stopped watch, when the file changes, then nothing is handed on", async (t) => {
  const f = follow(t, doc("orders"));
  t.true(await f.writeUntil(doc("orders-v2"), () => f.changes.length === 1), "the watch is polling");
  f.stop();
  f.write(doc("orders-v3"));
  // a watch on another file, started after, sees its own change: the stopped one had as long to see this one
  const seen = follow(t, doc("orders"));
  t.true(await seen.writeUntil(doc("orders-v9"), () => seen.changes.length === 1));
  t.deepEqual(f.changes.map((c) => c.inbounds[0]!.tags["kuma.io/service"]), ["orders-v2"]);
});

test("dataplane file › given a followed file, when the change is logged, then the line names the file and the new inbounds", async (t) => {
  const f = follow(t, doc("orders"));
  t.true(await f.writeUntil(doc("orders-v2"), () => f.changes.length === 1));
  t.deepEqual(f.infoObjs, [{ file: f.file, inbounds: f.changes[0]!.inbounds }]);
});

test("dataplane file › given a followed file, when the poll sees a rewrite with the same Dataplane, then nothing is handed on or logged", async (t) => {
  const f = follow(t, doc("orders"));
  t.true(await f.writeUntil(doc("orders-v2"), () => f.changes.length === 1));
  await f.writeSeen(doc("orders-v2"));
  // checks run one after another: once the next real change is handed on, the rewrite's check has run
  t.true(await f.writeUntil(doc("orders-v3"), () => f.changes.length >= 2));
  t.deepEqual(f.changes.map((c) => c.inbounds[0]!.tags["kuma.io/service"]), ["orders-v2", "orders-v3"]);
  t.is(f.infos.length, 2);
});

test("dataplane file › given a started watch, then its stat poll does not keep the process alive", (t) => {
  const polls = () => process.getActiveResourcesInfo().filter((r) => r === "StatWatcher").length;
  const before = polls();
  follow(t, doc("orders"));
  t.is(polls(), before);
});
