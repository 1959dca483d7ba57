// parse in worker › a batch of file jobs read on a worker thread: one outcome per job, or why the worker could not run them.
import test from "ava";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseInWorker } from "../../extproc/policy-source/parse-in-worker.js";
import type { FileJob } from "../../extproc/policy-source/policy-file.js";

test("parse in worker › given two files, when parsed in a worker, then each job's outcome comes back in order, as the main thread would read it", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "parse-in-worker-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "a.yaml"), "type: MeshTrafficPermission\nname: a\nmesh: default\nspec:\n  targetRef:\n    kind: Mesh\n  rules:\n    - default:\n        allow:\n          - spiffeID:\n              type: Exact\n              value: spiffe://default/web\n");
  const jobs: FileJob[] = [{ file: join(dir, "a.yaml"), stamp: "sa", mtimeMs: 0 }, { file: join(dir, "missing.yaml"), stamp: "sm", mtimeMs: 0 }];
  const out = await parseInWorker(jobs);
  if (!Array.isArray(out)) return t.fail(`worker failed: ${out.workerFailed}`);
  t.is(out.length, 2);
  const [a, missing] = out;
  t.true(a !== undefined && "state" in a && a.state.stamp === "sa" && a.state.held.map((p) => p.name).join() === "a", JSON.stringify(a));
  t.true(missing !== undefined && "error" in missing && /ENOENT/.test(missing.error), JSON.stringify(missing));
});

test("parse in worker › given jobs that cannot be sent to a worker, when parsed in a worker, then it resolves with why the worker failed", async (t) => {
  const jobs = [{ file: "x.yaml", stamp: "s", mtimeMs: 0, dataplane: { notCloneable: () => {} } }] as unknown as FileJob[];
  const out = await parseInWorker(jobs);
  t.false(Array.isArray(out));
  t.regex((out as { workerFailed: string }).workerFailed, /clone/i);
});

test("parse in worker › given a job list the worker cannot go through, when parsed in a worker, then it resolves with the worker's own error", async (t) => {
  const out = await parseInWorker(42 as unknown as FileJob[]); // cloned fine, but not iterable in the worker
  t.deepEqual(out, { workerFailed: "jobs is not iterable" });
});
