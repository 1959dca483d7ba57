// Writes N Kuma policies (universal YAML) into a directory for a sidecar's --policies: the shape of
// bench/policy.ts's policySet — one MTP for backend (deny all, allow web), the rest over other services
// and kinds, every 100th (or every n/selecting-th) also selecting backend for one specific client — split
// over files of 1 000.
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";

const PER_FILE = 1000;

/** The i-th policy document; `generation` changes names and values so a new set replaces every policy. */
export function policyDoc(i: number, generation: number, selectEvery = 100): object {
  const base = { mesh: "default" };
  if (i === 0) {
    return { type: "MeshTrafficPermission", name: `backend-g${generation}`, ...base, spec: { targetRef: { kind: "MeshService", name: "backend" }, from: [
      { targetRef: { kind: "Mesh" }, default: { action: "Deny" } },
      { targetRef: { kind: "MeshService", name: "web" }, default: { action: "Allow" } },
    ] } };
  }
  const target = { kind: "MeshService", name: i % selectEvery === 0 ? "backend" : `svc-${i}` };
  const client = { kind: "MeshService", name: `client-${i}` };
  if (i % 3 === 0) return { type: "MeshTrafficPermission", name: `mtp-${i}-g${generation}`, ...base, spec: { targetRef: target, from: [{ targetRef: client, default: { action: "Allow" } }] } };
  if (i % 3 === 1) return { type: "MeshFaultInjection", name: `mfi-${i}-g${generation}`, ...base, spec: { targetRef: target, from: [{ targetRef: client, default: { http: [{ delay: { value: `${1 + generation}ms`, percentage: 1 } }] } }] } };
  return { type: "MeshRateLimit", name: `mrl-${i}-g${generation}`, ...base, spec: { targetRef: target, from: [{ targetRef: { kind: "Mesh" }, default: { local: { http: { requestRate: { num: 1_000_000_000 + generation, interval: "1s" } } } } }] } };
}

/** Every 100th policy selects the bench sidecar (backend), or `selecting` of the n when given. */
function selectEveryOf(n: number, selecting?: number): number {
  return selecting ? Math.max(1, Math.floor(n / selecting)) : 100;
}

/** The YAML texts of an N-policy set, one per file of up to 1 000 policies. */
export function policyFiles(n: number, generation = 0, selecting?: number): string[] {
  const every = selectEveryOf(n, selecting);
  const files: string[] = [];
  for (let start = 0; start < n; start += PER_FILE) {
    const docs: string[] = [];
    for (let i = start; i < Math.min(n, start + PER_FILE); i++) docs.push(stringify(policyDoc(i, generation, every)));
    files.push(docs.join("---\n"));
  }
  return files;
}

/** Fresh directory holding an N-policy set. */
export function writePolicyDir(dir: string, n: number, generation = 0, selecting?: number): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  policyFiles(n, generation, selecting).forEach((text, f) => writeFileSync(join(dir, `set-${f}.yaml`), text));
}

/** Replaces the set in a followed directory: each file written aside and renamed in (atomic per file). */
export function replacePolicyFiles(dir: string, texts: string[]): void {
  texts.forEach((text, f) => {
    const tmp = join(dir, `.set-${f}.yaml.tmp`); // dot files are ignored by the dir source
    writeFileSync(tmp, text);
    renameSync(tmp, join(dir, `set-${f}.yaml`));
  });
}
