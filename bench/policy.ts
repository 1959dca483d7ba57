// Cost per policy decision with 1, 100 and 10 000 policies loaded (goal: 10 000 : 1 ≤ 1.3), for repeated
// clients (the usual case) and for a new client identity on every request (no per-client cache help), for the
// Kuma 2.6 dialect (from[], tags) and the 2.14 dialect (rules[], Dataplane labels, SPIFFE IDs).
// Run alone: node dist/bench/policy.js [--quick] [--dialect 2.6|2.14]
import { pathToFileURL } from "node:url";
import type { RequestFacts } from "../extproc/decision.js";
import { dataplaneFromTags, type Dataplane } from "../extproc/policy/documents/dataplane.js";
import { PolicyEngine } from "../extproc/policy/decide/engine.js";
import { validatePolicyObject } from "../extproc/policy/documents/parse.js";
import type { Policy } from "../extproc/policy/model/types.js";
import { type BenchRow, formatRows } from "./report.js";

const RATIO_GOAL = 1.3;
const SIZES = [1, 100, 10_000] as const;

function policy(doc: object): Policy {
  const { policy, violations } = validatePolicyObject(doc);
  if (!policy) throw new Error(`bench policy invalid: ${JSON.stringify(violations)}`);
  return policy;
}

/**
 * N policies shaped like a real mesh: one MTP for backend (deny all, allow web), and the rest spread over
 * other services and kinds; every 100th also selects backend with a from item for one specific client.
 */
export function policySet(n: number): Policy[] {
  const out: Policy[] = [
    policy({ type: "MeshTrafficPermission", name: "backend", spec: { targetRef: { kind: "MeshService", name: "backend" }, from: [
      { targetRef: { kind: "Mesh" }, default: { action: "Deny" } },
      { targetRef: { kind: "MeshService", name: "web" }, default: { action: "Allow" } },
    ] } }),
  ];
  for (let i = 1; i < n; i++) {
    const target = i % 100 === 0 ? "backend" : `svc-${i}`;
    const client = { kind: "MeshService", name: `client-${i}` };
    if (i % 3 === 0) out.push(policy({ type: "MeshTrafficPermission", name: `mtp-${i}`, spec: { targetRef: { kind: "MeshService", name: target }, from: [{ targetRef: client, default: { action: "Allow" } }] } }));
    else if (i % 3 === 1) out.push(policy({ type: "MeshFaultInjection", name: `mfi-${i}`, spec: { targetRef: { kind: "MeshService", name: target }, from: [{ targetRef: client, default: { http: [{ delay: { value: "1ms", percentage: 1 } }] } }] } }));
    else out.push(policy({ type: "MeshRateLimit", name: `mrl-${i}`, spec: { targetRef: { kind: "MeshService", name: target }, from: [{ targetRef: { kind: "Mesh" }, default: { local: { http: { requestRate: { num: 1_000_000_000, interval: "1s" } } } } }] } }));
  }
  return out;
}

const TD = "spiffe://default.z1.mesh.local";

/**
 * The same mesh in the 2.14 dialect: backend's MTP allows web by SPIFFE ID (rules), the rest select other
 * Dataplanes by labels; every 100th selects backend with an allow (MTP), a SPIFFE-matched delay (MFI) or a
 * catch-all rate (MRL).
 */
export function policySet214(n: number): Policy[] {
  const out: Policy[] = [
    policy({ type: "MeshTrafficPermission", name: "backend", spec: { targetRef: { kind: "Dataplane", labels: { app: "backend" } }, rules: [{ default: { allow: [{ spiffeID: { type: "Exact", value: `${TD}/ns/shop/sa/web` } }] } }] } }),
  ];
  for (let i = 1; i < n; i++) {
    const targetRef = { kind: "Dataplane", labels: { app: i % 100 === 0 ? "backend" : `svc-${i}` } };
    const client = { spiffeID: { type: "Exact", value: `${TD}/ns/shop/sa/client-${i}` } };
    if (i % 3 === 0) out.push(policy({ type: "MeshTrafficPermission", name: `mtp-${i}`, spec: { targetRef, rules: [{ default: { allow: [client] } }] } }));
    else if (i % 3 === 1) out.push(policy({ type: "MeshFaultInjection", name: `mfi-${i}`, spec: { targetRef, rules: [{ matches: [client], default: { http: [{ delay: { value: "1ms", percentage: 1 } }] } }] } }));
    else out.push(policy({ type: "MeshRateLimit", name: `mrl-${i}`, spec: { targetRef, rules: [{ default: { local: { http: { requestRate: { num: 1_000_000_000, interval: "1s" } } } } }] } }));
  }
  return out;
}

function facts(client: string, dialect: Dialect): RequestFacts {
  const uri = dialect === "2.14" ? `${TD}/ns/shop/sa/${client}` : `spiffe://default/${client};URI=kuma://version/v1`;
  const headers = new Map([["x-forwarded-client-cert", `By=spiffe://default/backend;Hash=0;URI=${uri}`]]);
  return { direction: "inbound", method: "GET", path: "/api/items", authority: "backend:8080", scheme: "http", headers, peerUriSans: [] };
}

type Dialect = "2.6" | "2.14";

function dialectSetup(dialect: Dialect): { dataplane: Dataplane; set: (n: number) => Policy[] } {
  const dataplane = dataplaneFromTags("default", "kuma.io/service=backend,version=v1").dataplane!;
  if (dialect === "2.6") return { dataplane, set: policySet };
  return { dataplane: { ...dataplane, labels: { app: "backend" } }, set: policySet214 };
}

/** Mean ns per decision over `decisions` decisions. */
function measure(engine: PolicyEngine, requests: readonly RequestFacts[], decisions: number): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < decisions; i++) engine.decide(requests[i % requests.length]!);
  return Number(process.hrtime.bigint() - start) / decisions;
}

export async function benchPolicy(opts: { quick: boolean; dialects?: readonly Dialect[] }): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const dialect of opts.dialects ?? (["2.6", "2.14"] as const)) rows.push(...(await benchDialect(dialect, opts.quick)));
  return rows;
}

async function benchDialect(dialect: Dialect, quick: boolean): Promise<BenchRow[]> {
  const decisions = quick ? 20_000 : 200_000;
  const rounds = quick ? 3 : 7;
  const { dataplane, set } = dialectSetup(dialect);
  const warm = Array.from({ length: 64 }, (_, i) => facts(i === 0 ? "web" : `client-${i * 100}`, dialect));
  const cold = Array.from({ length: 8192 }, (_, i) => facts(`new-client-${i}`, dialect)); // > the identity/rule caches
  const engines = SIZES.map((n) => {
    const engine = new PolicyEngine({ dataplane, nowMs: () => 0, kumaVersion: "2.14" });
    const t0 = process.hrtime.bigint();
    engine.replace(set(n));
    return { n, engine, compileMs: Number(process.hrtime.bigint() - t0) / 1e6 };
  });
  // All sets stay loaded and rounds interleave the sizes, so heap size and machine drift hit each alike. The
  // repeated-client rounds all run before the new-client ones: those leave thousands of identities and plans of
  // garbage, which would be collected in whichever round came next.
  const samples = new Map<string, number[]>();
  for (const e of engines) measure(e.engine, warm, decisions / 4); // JIT warm-up
  for (const [label, reqs] of [["repeated clients", warm], ["new client each request", cold]] as const) {
    for (let r = 0; r < rounds; r++) {
      for (const e of engines) {
        const key = `${label}|${e.n}`;
        samples.set(key, [...(samples.get(key) ?? []), measure(e.engine, reqs, decisions)]);
      }
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const rows: BenchRow[] = [];
  for (const label of ["repeated clients", "new client each request"]) {
    const base = median(samples.get(`${label}|1`)!);
    for (const e of engines) {
      const ns = median(samples.get(`${label}|${e.n}`)!);
      const row: BenchRow = { name: `policy decide (${dialect} dialect), ${label}, ${e.n} policies`, value: ns, unit: "ns/decision" };
      if (e.n !== 1) Object.assign(row, { baseline: base, ratio: ns / base, ...(e.n === 10_000 ? { goal: `ratio ≤ ${RATIO_GOAL}` } : {}) });
      rows.push(row);
    }
  }
  for (const e of engines) rows.push({ name: `policy compile (${dialect} dialect), ${e.n} policies`, value: e.compileMs, unit: "ms" });
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const at = process.argv.indexOf("--dialect");
  const dialects = at > 0 ? [process.argv[at + 1] as Dialect] : undefined;
  const rows = await benchPolicy({ quick: process.argv.includes("--quick"), dialects });
  console.log(formatRows(rows));
  for (const r of rows.filter((x) => x.name.includes(", 10000 policies") && x.ratio !== undefined)) console.log(`${r.name}: 10 000 : 1 = ${r.ratio!.toFixed(2)} (goal ≤ ${RATIO_GOAL})`);
}
