// What one policy change costs a sidecar: a sidecar follows a directory of N policies (100 selecting it); one
// policy that selects it is edited (its file rewritten), then one that does not; then the whole set is replaced
// (every policy renamed and changed: today's full reload). Each: write → "policy set in force" and the
// sidecar's CPU (its threads' run time) from the write until then; the one-policy figures as ratios of the full reload's.
import { writeFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { policyDoc, policyFiles, replacePolicyFiles } from "./policy-files.js";
import { cpuMsBetween, cpuReading, sleep } from "./proc.js";
import type { BenchRow } from "./report.js";
import { DEBOUNCE_MS } from "../extproc/policy-source/dir-source.js";
import { startSidecarProc, type ServerProc } from "./servers.js";

export interface PolicyChangeOptions {
  policies: number;
  selecting: number;
  /** Repetitions of each one-policy edit (medians shown). */
  edits: number;
}

const PER_FILE = 1000; // as bench/policy-files.ts splits a set
/** Wait after the start before the first edit (the dir source reads a file again until 2 s after its write). */
export const SETTLE_MS = 5000;

interface Change {
  ms: number;
  cpuMs: number;
  /** How many sets the write was applied in (a bulk write may come in more than one scan). */
  steps: number;
}

/** A change is over when no further `msg` line came for this long (a bulk write may be applied in steps). */
export const QUIET_MS = 400;
/** Edits of each kind made before the measured ones (see benchPolicyChange). */
export const WARMUP_EDITS = 3;

/**
 * Waits until `hits()` (log lines seen after a change, oldest first) has a last line with none after it for
 * QUIET_MS, and returns that line, how many there were, and `sample()` as taken when that line was first seen
 * (the change's CPU, say, not the quiet wait's). Undefined after `timeoutMs`.
 */
export async function settledChange<S>(hits: () => ReadonlyArray<{ at: number }>, sample: () => S, timeoutMs: number): Promise<{ at: number; count: number; sample: S } | undefined> {
  const samples = new WeakMap<object, S>();
  for (let waited = 0; waited < timeoutMs; waited += 5) {
    const seen = hits();
    const last = seen[seen.length - 1];
    if (last && !samples.has(last)) samples.set(last, sample());
    if (last && Date.now() - last.at >= QUIET_MS) return { at: last.at, count: seen.length, sample: samples.get(last)! };
    await sleep(5);
  }
  return undefined;
}

/**
 * Waits for the `msg` log lines after the write ("policy set in force"; "policy files read" for an edit that
 * changes nothing this dataplane holds, so nothing is put in force) until none came for QUIET_MS; the change
 * counts until the last of them (the whole write in force), CPU as well (bench/proc.ts cpuMsBetween).
 */
async function measure(s: ServerProc, write: () => void, msg = "policy set in force"): Promise<Change> {
  const before = s.lines.filter((l) => l.line.msg === msg).length;
  await sleep(300); // the previous change's tail (logging) is over
  const cpu0 = cpuReading(s.pid);
  const writeAt = Date.now();
  write();
  const done = await settledChange(() => s.lines.filter((l) => l.line.msg === msg).slice(before), () => cpuReading(s.pid), 120_000);
  if (!done) throw new Error("bench: policy change never came into force");
  return { ms: done.at - writeAt, cpuMs: cpuMsBetween(cpu0, done.sample), steps: done.count };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * File `f` of generation 0 with policy `i` given generation `gen` (one policy changed), rendered now; the returned
 * write (aside, then renamed in) is what the clock measures, not the bench's own YAML rendering.
 */
function editOne(dir: string, n: number, every: number, i: number, gen: number): () => void {
  const f = Math.floor(i / PER_FILE);
  const docs: string[] = [];
  for (let j = f * PER_FILE; j < Math.min(n, (f + 1) * PER_FILE); j++) docs.push(stringify(j === i ? { ...policyDoc(j, 0, every), labels: { edit: String(gen) } } : policyDoc(j, 0, every)));
  const text = docs.join("---\n");
  return () => {
    const tmp = join(dir, `.set-${f}.yaml.tmp`);
    writeFileSync(tmp, text);
    renameSync(tmp, join(dir, `set-${f}.yaml`));
  };
}

export async function benchPolicyChange(o: PolicyChangeOptions, progress: (msg: string) => void): Promise<BenchRow[]> {
  const every = Math.max(1, Math.floor(o.policies / o.selecting));
  const s = await startSidecarProc({ policies: o.policies, selecting: o.selecting });
  try {
    const selected: Change[] = [];
    const other: Change[] = [];
    progress(`policy change: one of ${o.policies} policies edited, ${o.edits}× selecting and ${o.edits}× not`);
    // A sidecar in its steady state: the start-up load's garbage collected, its files read well after their write.
    await sleep(SETTLE_MS);
    // Policy `every * 10` selects this dataplane (policy-files.ts), the one after it does not; each in its own file.
    const [selecting, notSelecting] = [every * 10, every * 10 + 1 + PER_FILE];
    // Warm-up edits, not counted: the first changes after start run code the start-up load did not make hot
    // (reusing cached documents, plan reuse); a long-running sidecar has long since seen changes.
    for (let k = 1; k <= WARMUP_EDITS; k++) {
      await measure(s, editOne(s.dir!, o.policies, every, selecting, 1000 + k));
      await measure(s, editOne(s.dir!, o.policies, every, notSelecting, 1000 + k), "policy files read");
    }
    for (let k = 1; k <= o.edits; k++) {
      selected.push(await measure(s, editOne(s.dir!, o.policies, every, selecting, k)));
      other.push(await measure(s, editOne(s.dir!, o.policies, every, notSelecting, k), "policy files read"));
    }
    progress(`policy change: the whole ${o.policies}-policy set replaced`);
    const fulls: Change[] = [];
    for (let g = 1; g <= 2; g++) {
      const next = policyFiles(o.policies, g, o.selecting);
      fulls.push(await measure(s, () => replacePolicyFiles(s.dir!, next)));
    }
    const full = { ms: median(fulls.map((c) => c.ms)), cpuMs: median(fulls.map((c) => c.cpuMs)), steps: Math.max(...fulls.map((c) => c.steps)) };
    const row = (what: string, xs: Change[], latencyGoal?: string): BenchRow[] => {
      const c = { ms: median(xs.map((x) => x.ms)), cpuMs: median(xs.map((x) => x.cpuMs)) };
      const worst = Math.max(...xs.map((x) => x.ms));
      return [
        { name: `${what}: sidecar CPU per change, median of ${xs.length} (vs the full reload's)`, value: c.cpuMs, unit: "ms", baseline: full.cpuMs, ratio: c.cpuMs / full.cpuMs, goal: "ratio ≤ 0.01" },
        { name: `${what}: write → in force, median (vs the full reload's)`, value: c.ms, unit: "ms", baseline: full.ms, ratio: c.ms / full.ms },
        { name: `${what}: write → in force, slowest of ${xs.length} (p99 bound)`, value: worst, unit: "ms", ...(latencyGoal ? { goal: latencyGoal } : {}) },
      ];
    };
    return [
      ...row(`one policy selecting this dataplane edited, ${o.policies} policies`, selected, "≤ 100"),
      ...row(`one policy not selecting it edited, ${o.policies} policies`, other),
      { name: `full reload: all ${o.policies} policies replaced, write → in force (${DEBOUNCE_MS} ms debounce included; applied in ≤ ${full.steps} step(s))`, value: full.ms, unit: "ms", goal: "≤ 1000" },
      { name: `full reload: sidecar CPU`, value: full.cpuMs, unit: "ms" },
    ];
  } finally {
    await s.stop();
  }
}
