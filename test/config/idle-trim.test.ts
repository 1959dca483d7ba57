// idle trim › the sidecar gives V8's young generation back once it has been quiet: the decision (pure), the
// timer and collection with a fake heap, and a real sidecar process started with the shipped NODE_OPTIONS.
import test from "ava";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Registry } from "prom-client";
import { writePolicyDir } from "../../bench/policy-files.js";
import { SIDECAR_ENV } from "../../extproc/config/runtime.js";
import { IDLE_TRIM, IdleTrimPolicy, startIdleTrim, type YoungGeneration } from "../../extproc/idle-trim.js";
import { silentLogger } from "../../extproc/log.js";
import { CLI_PATH, watchProcess } from "../drain/meshext-process.js";

const MiB = 1024 * 1024;
const GROWN = 8 * MiB;
const grown = (usedBytes: number): YoungGeneration => ({ committedBytes: GROWN, usedBytes });

test("idle trim › given a grown young generation, when two checks in a row see little allocated, then the second asks for a trim", (t) => {
  const policy = new IdleTrimPolicy();
  t.false(policy.check(grown(1 * MiB)), "the first reading has nothing to compare with");
  t.false(policy.check(grown(1 * MiB + 100_000)), "one quiet check is not enough");
  t.true(policy.check(grown(1 * MiB + 200_000)));
});

test("idle trim › given allocation above the quiet limit, or a collection between two checks, then the quiet count starts again", (t) => {
  const policy = new IdleTrimPolicy();
  policy.check(grown(0));
  policy.check(grown(100));
  // when more than the limit was allocated since the last check, then not quiet
  t.false(policy.check(grown(100 + IDLE_TRIM.quietMaxAllocatedBytes + 1)));
  t.false(policy.check(grown(200 + IDLE_TRIM.quietMaxAllocatedBytes + 1)), "one quiet check after the burst");
  // when the used size dropped (V8 collected in between: how much was allocated is unknown), then not quiet either
  t.false(policy.check(grown(50)));
  t.false(policy.check(grown(60)));
  t.true(policy.check(grown(70)));
  // but a drop within V8's allocation-buffer accounting is quiet
  const accounting = new IdleTrimPolicy();
  accounting.check(grown(1 * MiB));
  t.false(accounting.check(grown(1 * MiB - 10_000)));
  t.true(accounting.check(grown(1 * MiB - 20_000)));
});

test("idle trim › given a young generation at its starting size, then a quiet process is left alone", (t) => {
  const policy = new IdleTrimPolicy();
  const small = (usedBytes: number) => ({ committedBytes: IDLE_TRIM.grownAboveBytes, usedBytes });
  for (let i = 0; i < 5; i++) t.false(policy.check(small(i)));
});

test("idle trim › given a trim after which V8 kept the space, then it is not retried until allocation resumes and stops again", (t) => {
  const policy = new IdleTrimPolicy();
  policy.check(grown(0));
  policy.check(grown(10));
  t.true(policy.check(grown(20)));
  policy.trimmed(grown(0)); // V8 kept its 8 MiB
  for (let i = 1; i <= 4; i++) t.false(policy.check(grown(i)), `quiet check ${i} after the trim`);
  // when traffic allocates, then stops for two checks, then it trims again
  t.false(policy.check(grown(5 * MiB)));
  t.false(policy.check(grown(5 * MiB + 1)));
  t.true(policy.check(grown(5 * MiB + 2)));
});

test("idle trim › the timer reads the heap, runs one minor collection when quiet, and counts whether V8 gave the space back", async (t) => {
  // given a fake heap that stays quiet at 8 MiB committed and shrinks to 1 MiB when collected
  let young: YoungGeneration = { committedBytes: GROWN, usedBytes: 1000 };
  const collections: unknown[] = [];
  const registry = new Registry();
  const trim = startIdleTrim({
    registry, log: silentLogger(), checkEveryMs: 10, read: () => young,
    collect: (options) => {
      collections.push(options);
      young = { committedBytes: 1 * MiB, usedBytes: 0 };
    },
  });
  t.true(trim.active);
  // when it has run until its first collection, and for ten more checks
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  for (let waitedMs = 0; collections.length === 0 && waitedMs < 5000; waitedMs += 10) await sleep(10);
  await sleep(100);
  trim.stop();
  // then it collected once (young generation only) and the metric says the space shrank
  t.deepEqual(collections, [{ type: "minor" }]);
  const metric = await registry.getSingleMetric("meshext_young_generation_trims_total")!.get();
  t.deepEqual(metric.values.map((v) => [v.labels.result, v.value]), [["shrunk", 1]]);
});

test("idle trim › without --expose-gc there is nothing to run: it says so once and stays off", (t) => {
  // given a process without gc() (this test runner) and a logger that records
  const lines: string[] = [];
  const log = { ...silentLogger(), info: (message: string) => void lines.push(message) } as unknown as ReturnType<typeof silentLogger>;
  // when the trim starts without a collection
  const trim = startIdleTrim({ registry: new Registry(), log, collect: undefined });
  trim.stop();
  // then it is off and the line names the flag
  t.false(trim.active);
  t.is(lines.length, 1);
  t.regex(lines[0]!, /--expose-gc/);
});

test("idle trim › a sidecar started with the shipped NODE_OPTIONS gives its young generation back once idle", async (t) => {
  t.timeout(60_000);
  // given a real sidecar process with the shipped environment, loading 1 000 mesh policies of which 100 select it
  // (start-up and the load grow its young generation to 2 × 4 MiB, and V8 alone kept it there in the bench)
  const dir = join(mkdtempSync(join(tmpdir(), "meshext-idle-trim-")), "policies");
  writePolicyDir(dir, 1000, 0, 100);
  t.teardown(() => rmSync(dirname(dir), { recursive: true, force: true }));
  const args = ["sidecar", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--log-level", "debug", "--policies", dir, "--dataplane-tags", "kuma.io/service=backend,version=v1"];
  const child = spawn(process.execPath, [CLI_PATH, ...args], {
    env: { ...process.env, ...SIDECAR_ENV }, stdio: ["ignore", "pipe", "pipe"],
  });
  const proc = watchProcess(child);
  t.teardown(() => child.kill("SIGKILL"));
  const listening = await proc.waitForLine((l) => l.msg === "listening", 30_000);
  // when it sits idle for long enough for two quiet checks after V8's rate window
  await proc.waitForLine((l) => l.msg === "policy set in force", 30_000);
  const trimmed = await proc.waitForLine((l) => l.msg === "young generation trimmed", 40_000);
  // then V8 gave the space back: the log, the counter and the heap gauge agree
  t.is(trimmed.result, "shrunk");
  t.true(Number(trimmed.committedBytesBefore) > IDLE_TRIM.grownAboveBytes);
  t.true(Number(trimmed.committedBytesAfter) <= IDLE_TRIM.grownAboveBytes);
  const metrics = await (await fetch(`http://${String(listening.admin)}/metrics`)).text();
  t.regex(metrics, /^meshext_young_generation_trims_total\{result="shrunk"\} [1-9]/m);
  const young = Number(/^meshext_nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)/m.exec(metrics)?.[1]);
  t.true(young <= IDLE_TRIM.grownAboveBytes, `new space ${young} bytes`);
});
