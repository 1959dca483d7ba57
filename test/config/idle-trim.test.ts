// idle trim › the sidecar gives V8's young generation back once it has been quiet: the decision (pure), the
// timer and collection with a fake process, and a real sidecar process started with the shipped NODE_OPTIONS.
import test from "ava";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Registry } from "prom-client";
import { writePolicyDir } from "../../bench/policy-files.js";
import { sidecarEnv } from "../helpers/sidecar-env.js";
import { IDLE_TRIM, IdleTrimPolicy, type ProcessSample, startIdleTrim } from "../../extproc/idle-trim.js";
import { silentLogger } from "../../extproc/log.js";
import { eventually, sleep } from "../control-plane/helpers.js";
import { CLI_PATH, watchProcess } from "../drain/meshext-process.js";

const MiB = 1024 * 1024;
const GROWN = 8 * MiB;
/** A reading with the young generation grown, the process having used `cpuMs` of CPU so far. */
const grown = (cpuMs: number): ProcessSample => ({ cpuMicros: cpuMs * 1000, youngCommittedBytes: GROWN });
const QUIET_MS = IDLE_TRIM.quietMaxCpuMicros / 1000;

test("idle trim › given a grown young generation, when two checks in a row see the process nearly idle, then the second asks for a trim", (t) => {
  const policy = new IdleTrimPolicy();
  t.false(policy.check(grown(1000)), "the first reading has nothing to compare with");
  t.false(policy.check(grown(1005)), "one quiet check is not enough");
  t.true(policy.check(grown(1010)));
});

test("idle trim › given a check that saw more CPU than the quiet limit, then the quiet count starts again", (t) => {
  const policy = new IdleTrimPolicy();
  policy.check(grown(0));
  policy.check(grown(1));
  // when the process was busy since the last check (serving, loading a set), then not quiet
  t.false(policy.check(grown(2 + QUIET_MS)));
  t.false(policy.check(grown(3 + QUIET_MS)), "one quiet check after the busy one");
  t.true(policy.check(grown(4 + QUIET_MS)));
  // and exactly the limit still counts as quiet
  const edge = new IdleTrimPolicy();
  edge.check(grown(0));
  edge.check(grown(QUIET_MS));
  t.true(edge.check(grown(2 * QUIET_MS)));
});

test("idle trim › given work done since the last check (a policy set applied), then that check is not quiet, however little CPU it took", (t) => {
  const policy = new IdleTrimPolicy();
  // given a process nearly idle by CPU that applies a set between two checks
  policy.check({ ...grown(0), workDone: 0 });
  policy.check({ ...grown(1), workDone: 0 });
  // when the next check sees the work count moved, then no trim, and the quiet count starts again
  t.false(policy.check({ ...grown(2), workDone: 1 }));
  t.false(policy.check({ ...grown(3), workDone: 1 }), "one quiet check after the work");
  t.true(policy.check({ ...grown(4), workDone: 1 }));
});

test("idle trim › given a steady stream of cheap policy edits, then the timer never collects until the edits stop", async (t) => {
  // given a fake process that uses no CPU and a work count bumped by each edit
  let edits = 0;
  const collections: number[] = [];
  const trim = startIdleTrim({
    registry: new Registry(), log: silentLogger(), checkEveryMs: 10, read: () => ({ ...grown(1000), workDone: edits }),
    collect: () => void collections.push(edits),
  });
  t.teardown(() => trim.stop());
  // when an edit lands between every two checks
  const stream = setInterval(() => edits++, 5);
  await sleep(200);
  clearInterval(stream);
  // then nothing was collected meanwhile; once the edits stop, one collection comes
  t.deepEqual(collections, []);
  await eventually(() => collections.length > 0, 5000, 10);
  t.deepEqual(collections, [edits]);
});

test("idle trim › given a young generation at its starting size, then a quiet process is left alone", (t) => {
  const policy = new IdleTrimPolicy();
  for (let i = 0; i < 5; i++) t.false(policy.check({ cpuMicros: i, youngCommittedBytes: IDLE_TRIM.grownAboveBytes }));
});

test("idle trim › given a trim after which V8 kept the space, then it is not retried until the process is busy and goes quiet again", (t) => {
  const policy = new IdleTrimPolicy();
  policy.check(grown(0));
  policy.check(grown(1));
  t.true(policy.check(grown(2)));
  policy.trimmed(grown(20)); // the collection's own CPU is not activity; V8 kept its 8 MiB
  for (let i = 1; i <= 4; i++) t.false(policy.check(grown(20 + i)), `quiet check ${i} after the trim`);
  // when traffic comes and goes, then it trims again after two quiet checks
  t.false(policy.check(grown(1000)));
  t.false(policy.check(grown(1001)));
  t.true(policy.check(grown(1002)));
});

test("idle trim › the timer reads the process, runs one full collection when quiet, and counts whether V8 gave the space back", async (t) => {
  // given a fake process that stays idle with 8 MiB of young generation, shrinking to 1 MiB when collected
  let sample: ProcessSample = grown(1000);
  const collections: unknown[] = [];
  const registry = new Registry();
  const trim = startIdleTrim({
    registry, log: silentLogger(), checkEveryMs: 10, read: () => sample,
    collect: (options) => {
      collections.push(options);
      sample = { cpuMicros: sample.cpuMicros + 5000, youngCommittedBytes: 1 * MiB };
    },
  });
  t.true(trim.active);
  // when it has run until its first collection, and for ten more checks
  await eventually(() => collections.length > 0, 5000, 10);
  await sleep(100);
  trim.stop();
  // then it collected once and the metric says the space shrank
  t.deepEqual(collections, [{ type: "major" }]);
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
    env: sidecarEnv(), stdio: ["ignore", "pipe", "pipe"],
  });
  const proc = watchProcess(child);
  t.teardown(() => child.kill("SIGKILL"));
  const listening = await proc.waitForLine((l) => l.msg === "listening", 30_000);
  // when it sits idle for long enough for two quiet checks after V8's rate window
  await proc.waitForLine((l) => l.msg === "policy set in force", 30_000);
  // (V8's own memory reducer may give it back first, on a busy machine; then there is nothing left to trim)
  const youngBytes = async () => {
    const metrics = await (await fetch(`http://${String(listening.admin)}/metrics`)).text();
    return { metrics, young: Number(/^meshext_nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)/m.exec(metrics)?.[1]) };
  };
  const trimmedLine = () => proc.lines.find((l) => l.msg === "young generation trimmed");
  await eventually(async () => trimmedLine() !== undefined || (await youngBytes()).young <= IDLE_TRIM.grownAboveBytes, 40_000, 500);
  // then the space is back; a trim that ran says it shrank it, and the counter agrees
  const trimmed = trimmedLine();
  const { metrics, young } = await youngBytes();
  if (trimmed) {
    t.is(trimmed.result, "shrunk");
    t.true(Number(trimmed.youngBytesBefore) > IDLE_TRIM.grownAboveBytes);
    t.true(Number(trimmed.youngBytesAfter) <= IDLE_TRIM.grownAboveBytes);
    t.regex(metrics, /^meshext_young_generation_trims_total\{result="shrunk"\} [1-9]/m);
  } else {
    t.log("V8's memory reducer gave the young generation back before the trim's second quiet check");
  }
  t.true(young <= IDLE_TRIM.grownAboveBytes, `new space ${young} bytes`);
});
