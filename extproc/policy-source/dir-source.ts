// Policies from a directory (--policies DIR): every *.yaml|*.yml|*.json, followed with fs.watch (debounced)
// plus a periodic rescan: every 5 s while the directory cannot be watched, every 60 s as a safety net while
// it can. A file or policy that fails to parse or validate is skipped and logged; the last good version of a
// rejected policy stays. With `requireValidFirstLoad`, a first scan with rejected documents applies nothing (the
// sidecar stays not ready, answering per --before-first-sync) until a scan finds every document valid.
// With `selectFor`, only the policies that might select that dataplane are held: the rest leave just their key.
// Loads of many changed bytes are parsed in a short-lived worker thread (parse-worker.ts).
import { watch } from "node:fs";
import type { Registry } from "prom-client";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Dataplane } from "../policy/documents/dataplane.js";
import type { KumaVersion } from "../policy/model/kuma-version.js";
import type { Rejected } from "../policy/documents/parse.js";
import { resourcesOf } from "../policy/documents/resources.js";
import { combine } from "./combine-files.js";
import { DirSourceMetrics } from "./dir-metrics.js";
import { parseInWorker } from "./parse-in-worker.js";
import { digest, type FileJob, type FileOutcome, type FileState, readPolicyFiles } from "./policy-file.js";
import { isFailClosed, keptLastGoodFor, kindAndName } from "./last-good.js";
import type { ApplyPolicies, PolicySource, RejectedPolicy } from "./source.js";
import type { Policy } from "../policy/model/types.js";

export interface SourceLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DirSourceOptions {
  dir: string;
  apply: ApplyPolicies;
  log?: SourceLog;
  /** Quiet time after a change event before rescanning. @default DEBOUNCE_MS */
  debounceMs?: number;
  /** Periodic rescan while the directory cannot be watched (0 disables). @default 5000 */
  rescanIntervalMs?: number;
  /** Periodic rescan while fs.watch works: a safety net for changes it misses; each rescan stats every file (0 disables). @default 60000 */
  watchedRescanIntervalMs?: number;
  /** How the directory is watched (tests replace it). @default fs.watch */
  watchDir?: (dir: string, onChange: () => void) => DirWatcher;
  /** Hold only validated policies that might select this dataplane (the others are dropped at load). @default hold all */
  selectFor?: () => Dataplane;
  /** Parse only the changed documents of a changed file (false: every document of it, as a full reload). @default true */
  incremental?: boolean;
  /** Changed bytes from which a scan parses in a worker thread instead of the main thread (Infinity: never). @default 512 KiB */
  workerMinBytes?: number;
  /** Whose validators decide what loads. @default the engine default (2.14) */
  kumaVersion?: KumaVersion;
  /** Where meshext_policy_dir_rejected_policies(_total) are registered. @default not exported */
  registry?: Registry;
  /** Apply nothing until a scan finds no rejected document (later rejections keep last good versions). @default false */
  requireValidFirstLoad?: boolean;
  /** Told each time a first load is held back by rejected documents. */
  onFirstLoadRefused?: (rejected: Rejected[]) => void;
}

export interface ScanReport {
  files: number;
  policies: number;
  rejected: Rejected[];
  applied: boolean;
}

/** What DirPolicySource needs of an fs.watch watcher. */
export interface DirWatcher {
  on(event: "error", listener: (err: Error) => void): unknown;
  close(): void;
}

/**
 * Quiet time after a change event before the rescan: long enough for one writer's burst (a file written aside
 * and renamed in: two events within a millisecond; a set of files replaced one after another), short enough that
 * an edit is in force well within 100 ms (BENCHMARKS.md section 3b). It was 150 ms.
 */
export const DEBOUNCE_MS = 25;
/** Events that keep coming (a long bulk copy) still get a rescan this long after the first of them. */
export const MAX_DEBOUNCE_MS = 250;
export const RESCAN_INTERVAL_MS = 5000;
export const WATCHED_RESCAN_INTERVAL_MS = 60_000;

const POLICY_FILE = /\.(ya?ml|json)$/i;

/**
 * What of a held policy tells two sets apart (its source, kind, name, labels and spec, as JSON), worked out once
 * per policy object: a file's unchanged policies keep their objects from read to read, so a one-policy edit
 * serializes one policy, not every one held.
 */
const signatures = new WeakMap<Policy, string>();
function policySignature(p: Policy): string {
  let s = signatures.get(p);
  if (s === undefined) signatures.set(p, (s = JSON.stringify([p.source, p.type, p.name, p.labels, p.spec])));
  return s;
}

const WORKER_MIN_BYTES = 512 * 1024;

export class DirPolicySource implements PolicySource {
  private files = new Map<string, FileState>();
  private watcher: DirWatcher | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private debounce: ReturnType<typeof setTimeout> | undefined;
  /** When the first change event not yet followed by a rescan came (bounds how long events can defer it). */
  private firstEventAt: number | undefined;
  private lastApplied = "";
  private lastTotal = 0;
  private scanning: Promise<ScanReport> | undefined;
  private pending: Promise<ScanReport> | undefined;
  private isLoaded = false;
  private stopped = false;
  private readonly metrics: DirSourceMetrics | undefined;

  constructor(private readonly opts: DirSourceOptions) {
    this.metrics = opts.registry ? new DirSourceMetrics(opts.registry) : undefined;
  }

  get loaded(): boolean {
    return this.isLoaded;
  }

  /** Rejections of the files as last scanned; keptLastGood when that policy is still in force from an earlier version. */
  get rejected(): RejectedPolicy[] {
    // Held policies and those dropped because they cannot select this dataplane (keys type/mesh/name) both count.
    const droppedKeys = (s: FileState) => (s.droppedCount > 0 ? s.dropped.split("\n").map((k) => k.split("/")) : []);
    const inForce = new Set(
      [...this.files.values()].flatMap((s) => [
        ...s.held.map((p) => kindAndName(p.type, p.name)),
        ...droppedKeys(s).map(([type, , name]) => kindAndName(type, name)),
        ...s.resources.filter((r) => !isFailClosed(r)).map((r) => kindAndName(r.kind, r.name)),
      ]),
    );
    return [...this.files.values()].flatMap((s) => s.rejected.map((r) => ({ ...r, keptLastGood: keptLastGoodFor(r, inForce) })));
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.scan();
    const watchDir = this.opts.watchDir ?? ((dir: string, onChange: () => void) => watch(dir, onChange));
    try {
      this.watcher = watchDir(this.opts.dir, () => this.schedule());
      this.watcher.on("error", (err) => {
        this.opts.log?.warn({ err, dir: this.opts.dir }, "policy dir watch failed; relying on periodic rescan");
        this.watcher?.close();
        this.watcher = undefined;
        this.rescanEvery(this.opts.rescanIntervalMs ?? RESCAN_INTERVAL_MS);
      });
    } catch (err) {
      this.opts.log?.warn({ err, dir: this.opts.dir }, "cannot watch policy dir; relying on periodic rescan");
    }
    this.rescanEvery(this.watcher ? (this.opts.watchedRescanIntervalMs ?? WATCHED_RESCAN_INTERVAL_MS) : (this.opts.rescanIntervalMs ?? RESCAN_INTERVAL_MS));
  }

  private rescanEvery(intervalMs: number): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (intervalMs <= 0 || this.stopped) return;
    this.timer = setInterval(() => void this.scan(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watcher?.close();
    this.watcher = undefined;
    if (this.timer) clearInterval(this.timer);
    if (this.debounce) clearTimeout(this.debounce);
    await this.pending;
    await this.scanning;
  }

  /** Rescans now. Serialized: a scan requested during a scan runs once more afterwards, and its caller waits for that one. */
  scan(): Promise<ScanReport> {
    if (this.scanning) {
      this.pending ??= this.scanning.then(() => {
        this.pending = undefined;
        return this.scan();
      });
      return this.pending;
    }
    this.scanning = this.doScan().finally(() => {
      this.scanning = undefined;
    });
    return this.scanning;
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.debounce) clearTimeout(this.debounce);
    const now = Date.now();
    this.firstEventAt ??= now;
    const quietMs = this.opts.debounceMs ?? DEBOUNCE_MS;
    const waitMs = Math.min(quietMs, Math.max(0, this.firstEventAt + Math.max(quietMs, MAX_DEBOUNCE_MS) - now));
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      this.firstEventAt = undefined;
      void this.scan();
    }, waitMs);
  }

  private async doScan(): Promise<ScanReport> {
    let names: string[];
    try {
      names = (await readdir(this.opts.dir)).filter((n) => POLICY_FILE.test(n) && !n.startsWith(".")).sort();
    } catch (err) {
      this.opts.log?.error({ err, dir: this.opts.dir }, "cannot read policy dir; keeping the current policies");
      return { files: 0, policies: 0, rejected: [], applied: false };
    }
    const next = await this.readFiles(names.map((n) => join(this.opts.dir, n)));
    const rejected = [...next.values()].flatMap((s) => s.rejected);
    // Nothing read, nothing gone (the usual periodic rescan): the set in force is still the set.
    const same = this.isLoaded && this.lastApplied !== "" && next.size === this.files.size && [...next].every(([f, st]) => this.files.get(f) === st);
    this.files = next;
    this.metrics?.rejected.set(rejected.length);
    if (same) return { files: next.size, policies: this.lastTotal, rejected, applied: false };
    if (!this.isLoaded && rejected.length > 0 && this.opts.requireValidFirstLoad) {
      this.opts.log?.error({ dir: this.opts.dir, rejected: rejected.length }, "policy documents rejected at the first load: nothing applied until they are fixed (or start with --allow-invalid-policies)");
      this.opts.onFirstLoadRefused?.(rejected);
      return { files: next.size, policies: 0, rejected, applied: false };
    }
    const { policies, total } = combine(next.values());
    this.lastTotal = total;
    const resources = [...next.values()].flatMap((s) => s.resources);
    const signature = digest(JSON.stringify([total, policies.map(policySignature), resources]));
    const applied = signature !== this.lastApplied || !this.isLoaded;
    if (applied && !this.stopped) {
      this.lastApplied = signature;
      this.opts.apply(policies, `dir:${this.opts.dir}`, resourcesOf(resources), total);
      this.isLoaded = true;
      this.opts.log?.info({ dir: this.opts.dir, files: next.size, policies: total, held: policies.length, rejected: rejected.length }, "policies loaded");
    }
    return { files: next.size, policies: total, rejected, applied };
  }

  /** Reads and parses every file again and applies the result even if unchanged (what `retain` keeps has changed). */
  resync(): Promise<void> {
    const forget = () => {
      this.files = new Map();
      this.lastApplied = "";
    };
    if (this.scanning) return this.scanning.then(forget).then(() => this.scan()).then(() => undefined);
    forget();
    return this.scan().then(() => undefined);
  }

  /** Each file's state: kept when its stat stamp shows no change, else read (in a worker when many bytes changed). */
  private async readFiles(files: string[]): Promise<Map<string, FileState>> {
    const next = new Map<string, FileState | undefined>();
    const jobs: FileJob[] = [];
    let changedBytes = 0;
    const dataplane = this.opts.selectFor?.();
    for (const file of files) {
      const prev = this.files.get(file);
      try {
        const st = await stat(file, { bigint: true });
        if (!st.isFile()) continue;
        // A file not touched since a read made well after its last write is not read again: periodic rescans of
        // a large mesh would otherwise allocate every file's text each time.
        const stamp = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
        next.set(file, prev);
        if (prev && prev.settled && prev.stamp === stamp) continue;
        // A file read again only because its last read came soon after its write is most likely unchanged (its
        // digest tells): it does not count towards a worker, or every edit soon after another would start one.
        if (prev?.stamp !== stamp) changedBytes += Number(st.size);
        const documents = this.opts.incremental === false ? { byDocuments: false } : {};
        jobs.push({ file, stamp, mtimeMs: Number(st.mtimeMs), ...documents, ...(prev ? { prev: { digest: prev.digest, held: prev.held, dropped: prev.dropped, droppedCount: prev.droppedCount, ...(prev.droppedFilter ? { droppedFilter: prev.droppedFilter } : {}), resources: prev.resources, rejected: prev.rejected.length, ...(prev.documents ? { documents: prev.documents } : {}) } } : {}), ...(dataplane ? { dataplane } : {}), ...(this.opts.kumaVersion ? { kumaVersion: this.opts.kumaVersion } : {}) });
      } catch (err) {
        this.opts.log?.warn({ err, file }, "cannot read policy file; keeping its previous policies");
        next.set(file, prev);
      }
    }
    const pause = () => new Promise<void>((resolve) => setImmediate(resolve));
    const inProcess = () => readPolicyFiles(jobs, pause);
    let outcomes: FileOutcome[] | { workerFailed: string } = jobs.length > 0 && changedBytes >= (this.opts.workerMinBytes ?? WORKER_MIN_BYTES) ? await parseInWorker(jobs) : await inProcess();
    if ("workerFailed" in outcomes) {
      this.opts.log?.warn({ err: outcomes.workerFailed, files: jobs.length }, "policy parse worker failed; parsing on the main thread");
      outcomes = await inProcess();
    }
    let parsedDocuments = 0;
    jobs.forEach((job, i) => {
      const outcome = outcomes[i]!;
      this.metrics?.filesRead.inc();
      const prev = next.get(job.file);
      if ("error" in outcome) this.opts.log?.warn({ err: outcome.error, file: job.file }, "cannot read policy file; keeping its previous policies");
      else if ("unchanged" in outcome) next.set(job.file, prev && { ...prev, ...outcome.unchanged });
      else {
        this.metrics?.rejectedTotal.inc(outcome.state.rejected.length);
        this.metrics?.documentsParsed.inc(outcome.parsedDocuments);
        parsedDocuments += outcome.parsedDocuments;
        for (const r of outcome.state.rejected) this.opts.log?.warn({ file: job.file, index: r.index, kind: r.kind, name: r.name, violations: r.violations }, "policy rejected");
        for (const w of outcome.warned) this.opts.log?.warn({ file: job.file, ...w }, "policy uses deprecated Kuma fields");
        if (outcome.warnedNotHeld > 0) this.opts.log?.info({ file: job.file, policies: outcome.warnedNotHeld }, "policies that cannot select this dataplane use deprecated Kuma fields (not listed)");
        next.set(job.file, outcome.state);
      }
    });
    if (jobs.length > 0) this.opts.log?.info({ dir: this.opts.dir, files: jobs.length, documents: parsedDocuments }, "policy files read");
    return new Map([...next].filter((e): e is [string, FileState] => e[1] !== undefined));
  }
}
