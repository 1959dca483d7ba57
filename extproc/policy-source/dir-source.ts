// Policies from a directory (--policies DIR): every *.yaml|*.yml|*.json, followed with fs.watch (debounced)
// plus a periodic rescan as a fallback for filesystems where watch is unreliable. A file or policy that
// fails to parse or validate is skipped and logged; the last good version of a rejected policy stays.
import { watch, type FSWatcher } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { KumaVersion } from "../policy/kuma-version.js";
import { parsePolicyTextAsync, type Rejected } from "../policy/parse.js";
import { resourcesOf, type Resource } from "../policy/resources.js";
import type { Policy } from "../policy/types.js";
import { keepLastGood, kindAndName } from "./last-good.js";
import type { ApplyPolicies, PolicySource, RejectedPolicy } from "./source.js";

export interface SourceLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DirSourceOptions {
  dir: string;
  apply: ApplyPolicies;
  log?: SourceLog;
  /** Quiet time after a change event before rescanning. @default 150 */
  debounceMs?: number;
  /** Periodic rescan (0 disables). @default 5000 */
  rescanIntervalMs?: number;
  /** Whose validators decide what loads. @default the engine default (2.14) */
  kumaVersion?: KumaVersion;
}

export interface ScanReport {
  files: number;
  policies: number;
  rejected: Rejected[];
  applied: boolean;
}

const POLICY_FILE = /\.(ya?ml|json)$/i;

interface FileState {
  /** The text last parsed: an unchanged file is not parsed again (content, not mtime, so same-tick rewrites count). */
  text: string;
  policies: Policy[];
  /** `kind: Mesh` and service resources of the file. */
  resources: Resource[];
  rejected: Rejected[];
}

export class DirPolicySource implements PolicySource {
  private files = new Map<string, FileState>();
  private watcher: FSWatcher | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private debounce: ReturnType<typeof setTimeout> | undefined;
  private lastApplied = "";
  private scanning: Promise<ScanReport> | undefined;
  private pending: Promise<ScanReport> | undefined;
  private isLoaded = false;
  private stopped = false;

  constructor(private readonly opts: DirSourceOptions) {}

  get loaded(): boolean {
    return this.isLoaded;
  }

  /** Rejections of the files as last scanned; keptLastGood when that policy is still in force from an earlier version. */
  get rejected(): RejectedPolicy[] {
    const inForce = new Set([...this.files.values()].flatMap((s) => s.policies.map((p) => kindAndName(p.type, p.name))));
    return [...this.files.values()].flatMap((s) =>
      s.rejected.map((r) => ({ ...r, keptLastGood: r.kind !== undefined && r.name !== undefined && inForce.has(kindAndName(r.kind, r.name)) })),
    );
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.scan();
    try {
      this.watcher = watch(this.opts.dir, () => this.schedule());
      this.watcher.on("error", (err) => this.opts.log?.warn({ err, dir: this.opts.dir }, "policy dir watch failed; relying on periodic rescan"));
    } catch (err) {
      this.opts.log?.warn({ err, dir: this.opts.dir }, "cannot watch policy dir; relying on periodic rescan");
    }
    const every = this.opts.rescanIntervalMs ?? 5000;
    if (every > 0) {
      this.timer = setInterval(() => void this.scan(), every);
      this.timer.unref();
    }
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
    this.debounce = setTimeout(() => void this.scan(), this.opts.debounceMs ?? 150);
  }

  private async doScan(): Promise<ScanReport> {
    let names: string[];
    try {
      names = (await readdir(this.opts.dir)).filter((n) => POLICY_FILE.test(n) && !n.startsWith(".")).sort();
    } catch (err) {
      this.opts.log?.error({ err, dir: this.opts.dir }, "cannot read policy dir; keeping the current policies");
      return { files: 0, policies: 0, rejected: [], applied: false };
    }
    const next = new Map<string, FileState>();
    const rejected: Rejected[] = [];
    for (const name of names) {
      const file = join(this.opts.dir, name);
      const state = await this.readFileState(file, this.files.get(file));
      if (!state) continue;
      next.set(file, state);
      rejected.push(...state.rejected);
    }
    this.files = next;
    const policies = [...next.values()].flatMap((s) => s.policies);
    const resources = [...next.values()].flatMap((s) => s.resources);
    const signature = JSON.stringify([policies.map((p) => [p.source, p.type, p.name, p.labels, p.spec]), resources]);
    const applied = signature !== this.lastApplied || !this.isLoaded;
    if (applied && !this.stopped) {
      this.lastApplied = signature;
      this.opts.apply(policies, `dir:${this.opts.dir}`, resourcesOf(resources));
      this.isLoaded = true;
      this.opts.log?.info({ dir: this.opts.dir, files: next.size, policies: policies.length, rejected: rejected.length }, "policies loaded");
    }
    return { files: next.size, policies: policies.length, rejected, applied };
  }

  private async readFileState(file: string, prev: FileState | undefined): Promise<FileState | undefined> {
    try {
      const st = await stat(file);
      if (!st.isFile()) return undefined;
      const text = await readFile(file, "utf8");
      if (prev && prev.text === text) return prev;
      // Parsed in slices with setImmediate between them: a big file must not stall requests in flight.
      const parsed = await parsePolicyTextAsync(text, file, () => new Promise((resolve) => setImmediate(resolve)), { kumaVersion: this.opts.kumaVersion });
      for (const r of parsed.rejected) this.opts.log?.warn({ file, index: r.index, kind: r.kind, name: r.name, violations: r.violations }, "policy rejected");
      for (const p of parsed.policies) if (p.warnings.length > 0) this.opts.log?.warn({ file, kind: p.type, name: p.name, warnings: p.warnings }, "policy uses deprecated Kuma fields");
      return { text, policies: keepLastGood(parsed.policies, parsed.rejected, prev?.policies), resources: parsed.resources, rejected: parsed.rejected };
    } catch (err) {
      this.opts.log?.warn({ err, file }, "cannot read policy file; keeping its previous policies");
      return prev;
    }
  }
}
