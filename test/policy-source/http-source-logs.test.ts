// HttpPolicySource's log lines, read back from a recording logger: failed and refused syncs, the set applied,
// and the cache file (written, missing, unreadable, or none configured).
import test from "ava";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDir } from "../control-plane/helpers.js";
import { sourceFor } from "./harness.js";
import { serviceMtp } from "./fixtures.js";
import { recordedLog, scriptedCp, until } from "./scripted-cp.js";

const FAILED = "policy sync failed; keeping the last good set and retrying";
const REFUSED = "control plane refused our credentials: policy sync stopped, the last good set stays in force";
const NO_CACHE = "control plane unreachable and no policy cache yet";
const UNREADABLE = "could not read the policy cache file";
const UNWRITABLE = "could not write the policy cache file";
/** Nothing listens here: every sync fails at once (connection refused). */
const DOWN = "http://127.0.0.1:9";

async function tempDirFor(t: import("ava").ExecutionContext) {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  return dir.path;
}

test("http source logs › given a control plane answering 503, then each failed sync is a warning naming the control plane, the mesh, the reason and the attempt", async (t) => {
  const cp = await scriptedCp(t);
  cp.script = (s) => s.reply(503, {}, { title: "busy" });
  const { log, lines } = recordedLog();
  const { source } = sourceFor(cp.url, { log });
  t.teardown(() => source.stop());
  await source.start();
  t.true(await until(() => lines(FAILED).length >= 2, 3000));
  const [first, second] = lines(FAILED);
  t.like(first, { level: 40, component: "policy-source", controlPlane: cp.url, mesh: "default", reason: "server_error", attempt: 1 });
  t.regex(String(first!.err), /503/);
  t.like(second, { reason: "server_error", attempt: 2 });
});

test("http source logs › given a control plane answering 401, then the source halts with one error line naming the reason", async (t) => {
  const cp = await scriptedCp(t);
  cp.script = (s) => s.reply(401, {}, { title: "Unauthorized" });
  const { log, lines } = recordedLog();
  const { source } = sourceFor(cp.url, { log });
  t.teardown(() => source.stop());
  await source.start();
  t.true(source.status.halted);
  t.is(lines(REFUSED).length, 1);
  t.like(lines(REFUSED)[0], { level: 50, component: "policy-source", reason: "unauthorized" });
  t.regex(String(lines(REFUSED)[0]!.err), /401/);
  t.deepEqual(lines(FAILED), []);
});

test("http source logs › given a sync that applies a set, then a debug line says how many policies, how many rejected, and from where", async (t) => {
  const cp = await scriptedCp(t);
  cp.items.set("meshtrafficpermissions", [serviceMtp("one", "backend", "web")]);
  const { log, lines } = recordedLog();
  const { source } = sourceFor(cp.url, { log });
  t.teardown(() => source.stop());
  await source.start();
  t.is(lines("policy set applied").length, 1);
  t.like(lines("policy set applied")[0], { level: 20, policies: 1, rejected: 0, origin: `control-plane:${cp.url}/meshes/default` });
});

test("http source logs › given a cache file that cannot be written, when a set is applied, then a warning names the file and the error", async (t) => {
  const dir = await tempDirFor(t);
  await writeFile(join(dir, "plain"), "a file, not a directory");
  const cacheFile = join(dir, "plain", "cache.json");
  const cp = await scriptedCp(t);
  const { log, lines } = recordedLog();
  const { source } = sourceFor(cp.url, { log, cacheFile });
  t.teardown(() => source.stop());
  await source.start();
  t.true(source.loaded);
  t.true(await until(() => lines(UNWRITABLE).length === 1, 3000));
  t.like(lines(UNWRITABLE)[0], { level: 40, cacheFile });
  t.regex(String(lines(UNWRITABLE)[0]!.err), /\S/);
});

test("http source logs › given no cache file configured, when a set is applied, then nothing is said about a cache", async (t) => {
  const cp = await scriptedCp(t);
  const { log, lines } = recordedLog();
  const { source } = sourceFor(cp.url, { log });
  t.teardown(() => source.stop());
  await source.start();
  await new Promise((r) => setImmediate(r)); // a cache write that failed at once has logged by now
  t.true(source.loaded);
  t.deepEqual(lines().filter((l) => String(l.msg).includes("cache")), []);
});

test("http source logs › given no cache file configured and no control plane, when started, then only the failed sync is logged", async (t) => {
  const { log, lines } = recordedLog();
  const { source } = sourceFor(DOWN, { log });
  t.teardown(() => source.stop());
  await source.start();
  t.false(source.loaded);
  t.deepEqual(lines().map((l) => l.msg), [FAILED]);
});

test("http source logs › given a cache file that does not exist yet and no control plane, when started, then a warning names the file", async (t) => {
  const cacheFile = join(await tempDirFor(t), "none.json");
  const { log, lines } = recordedLog();
  const { source } = sourceFor(DOWN, { log, cacheFile });
  t.teardown(() => source.stop());
  await source.start();
  t.false(source.loaded);
  t.is(lines(NO_CACHE).length, 1);
  t.like(lines(NO_CACHE)[0], { level: 40, component: "policy-source", cacheFile });
  t.deepEqual(lines(UNREADABLE), []);
});

test("http source logs › given a cache file that is not a policy cache and no control plane, when started, then an error names the file and why", async (t) => {
  const cacheFile = join(await tempDirFor(t), "cache.json");
  await writeFile(cacheFile, "not json");
  const { log, lines } = recordedLog();
  const { source, applied } = sourceFor(DOWN, { log, cacheFile });
  t.teardown(() => source.stop());
  await source.start();
  t.false(source.loaded);
  t.is(applied.length, 0);
  t.is(lines(UNREADABLE).length, 1);
  t.like(lines(UNREADABLE)[0], { level: 50, cacheFile });
  t.regex(String(lines(UNREADABLE)[0]!.err), /JSON/);
  t.deepEqual(lines(NO_CACHE), []);
});
