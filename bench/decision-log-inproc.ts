// The decision log's cost per decision in process (less exposed to machine noise than req/s): PolicyEngine.decide()
// alone vs decide() with the audit plus DecisionRecorder.record() (sampling 0.01 and 1.0), writing to a temp file, and
// with --decision-log-push alone (its reservoir sample on the request path).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import type { RequestFacts } from "../extproc/decision.js";
import { type DecisionRecorder, startDecisionLog } from "../extproc/decision-log/recorder.js";
import { silentLogger } from "../extproc/log.js";
import { dataplaneFromTags } from "../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../extproc/policy/decide/engine.js";
import { policySet } from "./policy.js";
import { sleep } from "./proc.js";
import type { BenchRow } from "./report.js";
import { median } from "./stats.js";

const FACTS: RequestFacts = {
  direction: "inbound", method: "GET", path: "/api/items", authority: "backend:8080", scheme: "http", peerUriSans: [], requestId: "0f0e9a2c-bench",
  headers: new Map([["x-forwarded-client-cert", "By=spiffe://default/backend;Hash=0;URI=spiffe://default/web;URI=kuma://version/v1"]]),
};

export async function benchDecisionLogInProcess(opts: { quick: boolean; policies: number }): Promise<BenchRow[]> {
  const decisions = opts.quick ? 20_000 : 100_000;
  const rounds = opts.quick ? 3 : 7;
  const dir = mkdtempSync(join(tmpdir(), "meshext-bench-dl-"));
  try {
    const dataplane = dataplaneFromTags("default", "kuma.io/service=backend,version=v1").dataplane!;
    const policies = policySet(opts.policies);
    const variants: Array<{ label: string; engine: PolicyEngine; recorder?: DecisionRecorder; samples: number[] }> = [];
    for (const sample of [undefined, 0.01, 1] as const) {
      const engine = new PolicyEngine({ dataplane, audit: sample !== undefined });
      engine.replace(policies);
      const recorder = sample === undefined ? undefined : await startDecisionLog(
        { decisionLog: join(dir, `d-${sample}.log`), decisionLogSample: sample, decisionLogHeaders: "", decisionLogMaxBytes: 100 * 2 ** 20, decisionLogMaxFiles: 1, decisionLogBufferBytes: 64 * 2 ** 20 },
        new Registry(), silentLogger(),
      );
      variants.push({ label: sample === undefined ? "decide, log off" : `decide + log, sample ${sample}`, engine, recorder, samples: [] });
    }
    // --decision-log-push alone: the request path's share (the reservoir); the interval is long enough that nothing
    // is sent during the run, so no network time is measured.
    const pushEngine = new PolicyEngine({ dataplane, audit: true });
    pushEngine.replace(policies);
    const pushRecorder = await startDecisionLog(
      { decisionLog: "", decisionLogSample: 1, decisionLogHeaders: "", decisionLogMaxBytes: 100 * 2 ** 20, decisionLogMaxFiles: 1, decisionLogBufferBytes: 64 * 2 ** 20, decisionLogPush: true, decisionLogPushMaxRecords: 500, decisionLogPushIntervalMs: 3_600_000, decisionLogPushBatchBytes: 256 * 1024, controlPlane: "http://127.0.0.1:9", controlPlaneToken: "" },
      new Registry(), silentLogger(),
    );
    variants.push({ label: "decide + push only (500 per interval), sample 1", engine: pushEngine, recorder: pushRecorder, samples: [] });
    const run = (v: { engine: PolicyEngine; recorder?: DecisionRecorder }): number => {
      const start = process.hrtime.bigint();
      for (let i = 0; i < decisions; i++) {
        const d = v.engine.decide(FACTS);
        v.recorder?.record(FACTS, d, 0.05);
      }
      return Number(process.hrtime.bigint() - start) / decisions;
    };
    for (const v of variants) run(v); // warm-up
    for (let r = 0; r < rounds; r++) {
      for (const v of variants) {
        v.samples.push(run(v));
        await sleep(20); // let the writer drain between rounds
      }
    }
    for (const v of variants) await v.recorder?.close();
    const base = median(variants[0]!.samples);
    return variants.map((v, i) => {
      const ns = median(v.samples);
      return i === 0 ? { name: `${v.label}, ${opts.policies} policies (in process)`, value: ns, unit: "ns/decision" } : { name: `${v.label}, ${opts.policies} policies (in process, vs off)`, value: ns, unit: "ns/decision", baseline: base, ratio: ns / base };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
