// One policy edit in a 10 000-policy mesh with 1 000 long-polling sidecars (simulated HTTP clients), against
// `meshext control-plane` (a child process): per-dataplane sets (`…/dataplanes/{name}/_policy-set`) beside
// today's full lists (every sidecar long-polls the list and re-reads every page when woken). Per edit: the
// control plane's CPU, how many sidecars were woken (and how many of them the edit does not select), bytes
// read per woken sidecar, write → answer at an affected sidecar. Run alone: node dist/bench/control-plane-policy-sets.js [--quick]
import { Agent, request } from "node:http";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { stringify } from "yaml";
import { SIDECAR_ENV } from "../extproc/config/runtime.js";
import { cpuMicros, SERVER_CPU, sleep, spawnPinned, stopChild, waitForLine } from "./proc.js";
import { type BenchRow } from "./report.js";
import { summarize } from "./stats.js";

export interface PolicySetBenchOptions {
  sidecars: number;
  policies: number;
  /** Policies selecting each dataplane (each policy selects sidecars × selecting / policies of them). */
  selecting: number;
  /** Edits measured per path, one at a time. */
  edits: number;
  /** Full-list path: this many of the woken sidecars re-read every page (all of them would move GBs per edit here). */
  fullRereaders: number;
}

const WAIT = "30s";
const PAGE = 100;

interface Reply {
  status: number;
  etag?: string;
  bytes: number;
  body?: string;
}

export function send(agent: Agent, base: URL, method: string, path: string, headers: Record<string, string> = {}, body?: string, keepBody = false): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: base.hostname, port: base.port, method, path, headers: { ...headers, ...(body ? { "content-type": "application/json" } : {}) } }, (res) => {
      let bytes = 0;
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => ((bytes += c.length), keepBody && chunks.push(c)));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, etag: res.headers.etag, bytes, ...(keepBody ? { body: Buffer.concat(chunks).toString() } : {}) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** Shard of dataplane i and of policy j: policy j selects the dataplanes of its shard (MeshSubset on a tag). */
export const shards = (o: PolicySetBenchOptions) => o.policies / o.selecting;
export const policy = (j: number, o: PolicySetBenchOptions, generation = 0) => ({
  type: "MeshTrafficPermission",
  mesh: "default",
  name: `p-${j}`,
  ...(generation ? { labels: { "bench/generation": String(generation) } } : {}),
  spec: { targetRef: { kind: "MeshSubset", tags: { shard: `s-${j % shards(o)}` } }, from: [{ targetRef: { kind: "MeshService", name: `client-${j}` }, default: { action: "Allow" } }] },
});

export function seedDataDir(o: PolicySetBenchOptions, generation = 0): string {
  const dir = mkdtempSync(join(tmpdir(), "meshext-cp-sets-"));
  const mtps = join(dir, "meshes", "default", "meshtrafficpermissions");
  const dps = join(dir, "meshes", "default", "dataplanes");
  mkdirSync(mtps, { recursive: true });
  mkdirSync(dps, { recursive: true });
  for (let j = 0; j < o.policies; j++) writeFileSync(join(mtps, `p-${j}.yaml`), stringify(policy(j, o, generation)));
  const now = new Date().toISOString();
  for (let i = 0; i < o.sidecars; i++) {
    const dp = { type: "Dataplane", mesh: "default", name: `dp-${i}`, networking: { address: "10.0.0.1", inbound: [{ port: 8080, tags: { "kuma.io/service": `svc-${i}`, shard: `s-${i % shards(o)}` } }] }, status: { state: "online", lastSeenTime: now } };
    writeFileSync(join(dps, `dp-${i}.yaml`), stringify(dp));
  }
  return dir;
}

interface Answer {
  sidecar: number;
  atMs: number;
  bytes: number;
}

interface PathResult {
  cpuMsPerEdit: number[];
  woken: number[];
  wokenNotSelected: number[];
  bytesPerWoken: number[];
  visibleMs: number[];
  errors: number;
}

/** Holds one long-poll per sidecar on `pathOf(i)`, re-armed at the answered ETag; `onAnswer` may read more (full lists). */
async function measure(kind: "set" | "lists", o: PolicySetBenchOptions, progress: (m: string) => void): Promise<PathResult> {
  const dataDir = seedDataDir(o);
  const child = spawnPinned(SERVER_CPU, process.execPath, ["dist/extproc/cli.js", "control-plane", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--log-level", "info"], SIDECAR_ENV);
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const result: PathResult = { cpuMsPerEdit: [], woken: [], wokenNotSelected: [], bytesPerWoken: [], visibleMs: [], errors: 0 };
  let stopping = false;
  try {
    const line = await waitForLine(child, (l) => l.msg === "control plane listening", 60_000, "control plane start");
    const base = new URL(String(line.url));
    const pathOf = (i: number) => (kind === "set" ? `/meshes/default/dataplanes/dp-${i}/_policy-set` : `/meshes/default/meshtrafficpermissions?size=${PAGE}`);
    const answers: Answer[] = [];
    let armed = 0;
    let editShard = -1;
    const step = Math.ceil(o.sidecars / o.fullRereaders);
    /** The full-list path's re-read: every page of the list, as the sidecar's sync does. */
    const reread = async (): Promise<number> => {
      let bytes = 0;
      for (let offset = 0; offset < o.policies; offset += PAGE) bytes += (await send(agent, base, "GET", `/meshes/default/meshtrafficpermissions?size=${PAGE}&offset=${offset}`)).bytes;
      return bytes;
    };
    const follow = async (i: number) => {
      let etag = "";
      while (!etag) etag = (await send(agent, base, "GET", pathOf(i)).catch(() => undefined))?.etag ?? (await sleep(100), "");
      armed++;
      while (!stopping) {
        const waitPath = `${pathOf(i)}${pathOf(i).includes("?") ? "&" : "?"}wait=${WAIT}`;
        const r = await send(agent, base, "GET", waitPath, { "if-none-match": etag }).catch(() => undefined);
        if (!r) {
          if (!stopping) result.errors++;
          await sleep(100);
          continue;
        }
        if (r.status !== 200 || stopping) continue;
        etag = r.etag ?? etag;
        const answeredMs = Date.now();
        // Full lists: the affected sidecars and every `step`-th other one re-read every page; the rest count as woken.
        const rereads = kind === "lists" && (i % shards(o) === editShard || i % step === 0);
        const extra = rereads ? await reread().catch(() => (result.errors++, NaN)) : kind === "lists" ? NaN : 0;
        answers.push({ sidecar: i, atMs: rereads ? Date.now() : answeredMs, bytes: r.bytes + extra });
      }
    };
    progress(`policy sets: ${kind === "set" ? "per-dataplane sets" : "full lists"}, arming ${o.sidecars} long-polls`);
    const loops = Array.from({ length: o.sidecars }, (_, i) => sleep(i % 200).then(() => follow(i)));
    while (armed < o.sidecars) await sleep(200);
    await sleep(2000);
    for (let e = 0; e < o.edits; e++) {
      const j = e * 7 + 1; // a different shard each edit
      answers.length = 0;
      editShard = j % shards(o);
      const cpu0 = cpuMicros(child.pid!);
      const sentMs = Date.now();
      const put = await send(agent, base, "PUT", `/meshes/default/meshtrafficpermissions/p-${j}`, {}, JSON.stringify(policy(j, o, e + 1))).catch(() => undefined);
      if (put?.status !== 200) result.errors++;
      await sleep(kind === "lists" ? 8000 : 2000);
      result.cpuMsPerEdit.push((cpuMicros(child.pid!) - cpu0) / 1000);
      const selected = (i: number) => i % shards(o) === j % shards(o);
      result.woken.push(new Set(answers.map((a) => a.sidecar)).size);
      result.wokenNotSelected.push(new Set(answers.filter((a) => !selected(a.sidecar)).map((a) => a.sidecar)).size);
      const measured = answers.filter((a) => !Number.isNaN(a.bytes));
      result.bytesPerWoken.push(measured.reduce((n, a) => n + a.bytes, 0) / Math.max(1, measured.length));
      for (const a of measured.filter((x) => selected(x.sidecar))) result.visibleMs.push(a.atMs - sentMs);
    }
    stopping = true;
    void loops;
  } finally {
    stopping = true;
    await stopChild(child);
    agent.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return result;
}

const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / Math.max(1, v.length);

export async function benchPolicySets(o: PolicySetBenchOptions, progress: (msg: string) => void): Promise<{ header: string[]; table: string[][]; rows: BenchRow[] }> {
  const lists = await measure("lists", o, progress);
  const sets = await measure("set", o, progress);
  const header = ["path", "edits", "CP CPU ms / edit", "sidecars woken / edit", "woken, not selected", "KiB read / woken sidecar", "write → answer p50 ms", "write → answer p99 ms", "errors"];
  const row = (name: string, r: PathResult) => {
    const v = summarize(r.visibleMs);
    return [name, String(r.cpuMsPerEdit.length), mean(r.cpuMsPerEdit).toFixed(0), mean(r.woken).toFixed(0), mean(r.wokenNotSelected).toFixed(0), (mean(r.bytesPerWoken) / 1024).toFixed(1), v.p50.toFixed(0), v.p99.toFixed(0), String(r.errors)];
  };
  const table = [row(`full lists (today; ${o.sidecars / shards(o)} + ${o.fullRereaders} of the woken re-read every page)`, lists), row("per-dataplane set", sets)];
  const p99 = (r: PathResult) => summarize(r.visibleMs).p99;
  const rows: BenchRow[] = [
    { name: "control-plane CPU per one-policy edit", value: mean(sets.cpuMsPerEdit), unit: "ms", baseline: mean(lists.cpuMsPerEdit), ratio: mean(sets.cpuMsPerEdit) / mean(lists.cpuMsPerEdit) },
    { name: "sidecars woken by an edit that does not select them", value: mean(sets.wokenNotSelected), unit: "sidecars", baseline: mean(lists.wokenNotSelected), goal: "= 0 (issue 34)" },
    { name: "bytes read per woken sidecar", value: mean(sets.bytesPerWoken), unit: "bytes", baseline: mean(lists.bytesPerWoken), ratio: mean(sets.bytesPerWoken) / mean(lists.bytesPerWoken) },
    { name: "write → answer at an affected sidecar, p99", value: p99(sets), unit: "ms", baseline: p99(lists), ratio: p99(sets) / p99(lists), goal: "≤ 100 ms (issue 34)" },
  ];
  return { header, table, rows };
}

export function policySetsNotes(o: PolicySetBenchOptions): string[] {
  return [
    `bench/control-plane-policy-sets.ts: \`meshext control-plane\` (a child process pinned to CPU ${SERVER_CPU}) on a data directory of ${o.policies} MeshTrafficPermissions and ${o.sidecars} Dataplanes; policy j selects (MeshSubset on a \`shard\` tag) the Dataplanes of shard j mod ${shards(o)}, so ${o.selecting} policies select each Dataplane and each policy selects ${o.sidecars / shards(o)} Dataplanes. ${o.sidecars} simulated sidecars (HTTP clients in the bench process) each hold one long-poll (\`If-None-Match\` + \`?wait=${WAIT}\`), re-armed at the answered ETag; ${o.edits} edits of one policy each (a new label), one at a time.`,
    `Full lists (today's path against the embedded control plane): each sidecar long-polls the MeshTrafficPermission list (${PAGE} per page); when woken it re-reads every page, as HttpPolicySource's sync does — here the ${o.sidecars / shards(o)} affected sidecars and ${o.fullRereaders} others do (bytes and answer times are theirs; CPU counts only their reads, so the real full-list CPU per edit, with every woken sidecar re-reading, is larger). Per-dataplane set: each sidecar long-polls its own \`/meshes/default/dataplanes/{name}/_policy-set\`, whose answer is the whole new set.`,
    "CPU = utime+stime of the control plane from the PUT to 2 s (sets) or 8 s (lists) after it. Woken = sidecars answered 200 after the edit; not selected = of those, the ones the edited policy does not select. Write → answer = PUT sent to the affected sidecar holding the new set (lists: its last page read).",
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const quick = process.argv.includes("--quick");
  const opts: PolicySetBenchOptions = { sidecars: 1000, policies: 10_000, selecting: 100, edits: quick ? 3 : 5, fullRereaders: quick ? 20 : 50 };
  const t0 = Date.now();
  const out = await benchPolicySets(opts, (m) => process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(0)}s] ${m}\n`));
  const { formatRows, formatTable } = await import("./report.js");
  console.log(policySetsNotes(opts).join("\n"));
  console.log(formatTable(out.header, out.table));
  console.log(formatRows(out.rows));
  process.exit(0);
}
