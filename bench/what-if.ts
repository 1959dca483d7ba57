// `meshext policy what-if` replay rate: recorded decisions replayed per second on one core against a candidate set of
// 1 000 policies (goal ≥ 100 000/s), read from a decision-log file as the command reads it, beside the engine's own
// decide() rate on the same requests (the baseline of the ratio).
// Run alone: node dist/bench/what-if.js [--quick]
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import type { RequestFacts } from "../extproc/decision.js";
import { PolicyEngine } from "../extproc/policy/decide/engine.js";
import { dataplaneFromTags } from "../extproc/policy/documents/dataplane.js";
import { validatePolicyObject } from "../extproc/policy/documents/parse.js";
import { NO_RESOURCES } from "../extproc/policy/documents/resources.js";
import type { Policy } from "../extproc/policy/model/types.js";
import { Replayer } from "../extproc/policy-tools/replay.js";
import { policySet } from "./policy.js";
import { type BenchRow, formatRows } from "./report.js";

const POLICIES = 1000;
const GOAL_PER_S = 100_000;
const CLIENTS = 64;

/** One recorded inbound decision of `client` as the sidecar writes it (decision-log/record.ts). */
function recordLine(i: number): string {
  const client = i % CLIENTS === 0 ? "web" : `client-${(i % CLIENTS) * 100}`;
  const allowed = client === "web";
  return JSON.stringify({
    time: "2026-12-02T04:00:00.000Z", requestId: `r-${i}`, dataplane: "backend", mesh: "default", direction: "inbound", method: "GET", path: `/api/items/${i % 1000}`, authority: "backend:8080",
    client: { tags: `kuma.io/service=${client}`, source: "xfcc", spiffe: `spiffe://default/${client}` },
    matched: [], outcome: allowed ? "allow" : "deny", ...(allowed ? {} : { status: 403 }), kind: "MeshTrafficPermission", policy: "backend", rule: allowed ? "from[1]" : "from[0]", reason: "", latencyMs: 0.01,
  });
}

/** The candidate: the bench mesh with one more `from` item in backend's MTP, a Deny of web (1 of the 64 recorded clients). */
function candidate(): Policy[] {
  const [backend, ...rest] = policySet(POLICIES);
  const spec = { ...backend!.spec, from: [...(backend!.spec.from ?? []), { targetRef: { kind: "MeshService", name: "web" }, default: { action: "Deny" } }] };
  const { policy } = validatePolicyObject({ type: backend!.type, mesh: backend!.mesh, name: backend!.name, spec });
  return [policy!, ...rest];
}

export async function benchWhatIf(opts: { quick: boolean }): Promise<BenchRow[]> {
  const records = opts.quick ? 200_000 : 1_000_000;
  const dataplane = dataplaneFromTags("default", "kuma.io/service=backend,version=v1", "backend").dataplane!;
  const policies = candidate();
  const lines = Array.from({ length: records }, (_, i) => recordLine(i));
  const dir = mkdtempSync(join(tmpdir(), "meshext-bench-what-if-"));
  const file = join(dir, "decisions.log");
  writeFileSync(file, lines.join("\n") + "\n");
  try {
    // Baseline: the engine's own decide() on the same requests (XFCC-identified, as recorded).
    const engine = new PolicyEngine({ dataplane, nowMs: () => 0 });
    engine.replace(policies);
    const facts: RequestFacts[] = Array.from({ length: CLIENTS }, (_, c) => {
      const client = c === 0 ? "web" : `client-${c * 100}`;
      return { direction: "inbound", method: "GET", path: "/api/items/1", authority: "backend:8080", scheme: "http", headers: new Map([["x-forwarded-client-cert", `By=spiffe://default/backend;URI=spiffe://default/${client}`]]), peerUriSans: [] };
    });
    const rounds = opts.quick ? 3 : 5;
    const decide: number[] = [];
    const inMemory: number[] = [];
    const fromFile: number[] = [];
    let changed = 0;
    for (let r = 0; r < rounds; r++) {
      let t0 = process.hrtime.bigint();
      for (let i = 0; i < records; i++) engine.decide(facts[i % CLIENTS]!);
      decide.push(records / (Number(process.hrtime.bigint() - t0) / 1e9));
      let replayer = new Replayer({ dataplanes: [dataplane], policies, resources: NO_RESOURCES, examples: 20 });
      t0 = process.hrtime.bigint();
      for (let i = 0; i < records; i++) replayer.line(lines[i]!, i + 1);
      inMemory.push(records / (Number(process.hrtime.bigint() - t0) / 1e9));
      changed = replayer.result().changed;
      replayer = new Replayer({ dataplanes: [dataplane], policies, resources: NO_RESOURCES, examples: 20 });
      t0 = process.hrtime.bigint();
      let n = 0;
      for await (const line of createInterface({ input: createReadStream(file, { encoding: "utf8" }), crlfDelay: Infinity })) replayer.line(line, ++n);
      fromFile.push(n / (Number(process.hrtime.bigint() - t0) / 1e9));
    }
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const base = median(decide);
    const row = (name: string, v: number, goal?: string): BenchRow => ({ name, value: Math.round(v), unit: "decisions/s", baseline: Math.round(base), ratio: v / base, ...(goal ? { goal } : {}) });
    return [
      { name: `engine decide(), ${POLICIES} policies (baseline)`, value: Math.round(base), unit: "decisions/s" },
      row(`what-if replay from a decision-log file, ${POLICIES} policies (${changed} of ${records} changed)`, median(fromFile), `≥ ${GOAL_PER_S}`),
      row(`what-if replay of lines in memory (JSON.parse + replay), ${POLICIES} policies`, median(inMemory)),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  console.log(formatRows(await benchWhatIf({ quick: process.argv.includes("--quick") })));
}
