// Policies from a directory (--policies DIR): every *.yaml|*.yml|*.json, followed with fs.watch (debounced)
// plus a periodic rescan as a fallback for filesystems where watch is unreliable. A file or policy that
// fails to parse or validate is skipped and logged; the last good version of a rejected policy stays.
// With `retain`, only the policies that might select this dataplane are held: the rest leave just their key.
import { createHash } from "node:crypto";
import { watch, type FSWatcher } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { parsePolicyTextAsync, type Rejected } from "../policy/parse.js";
import { compact, StringTable } from "../policy/compact.js";
import { dedupe } from "../policy/compile.js";
import { policyKey, type Policy } from "../policy/types.js";
import type { ApplyPolicies, PolicySource } from "./source.js";

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
  /** Which validated policies to hold (the others are dropped at load, after validation). @default all */
  retain?: (policy: Policy) => boolean;
}

export interface ScanReport {
  files: number;
  policies: number;
  rejected: Rejected[];
  applied: boolean;
}

const POLICY_FILE = /\.(ya?ml|json)$/i;
/** A read this long after a file's mtime saw its final content for that mtime (coarse-timestamp filesystems included). */
const SETTLED_AFTER_WRITE_MS = 2000;

interface FileState {
  /** Digest of the text last parsed: an unchanged file is not parsed again (content, not mtime, so same-tick rewrites count). */
  digest: string;
  /** inode, size, mtime and ctime (ns) when last read, and whether that read came well after the last write. */
  stamp: string;
  settled: boolean;
  /** The file's distinct policies in order: held ones, and the key (type/mesh/name) of each one not retained. */
  entries: Array<Policy | string>;
  rejected: Rejected[];
}

const held = (entries: ReadonlyArray<Policy | string>): Policy[] => entries.filter((e): e is Policy => typeof e !== "string");

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
    const { policies, total } = combine(next.values());
    const signature = digest(JSON.stringify([total, policies.map((p) => [p.source, p.type, p.name, p.labels, p.spec])]));
    const applied = signature !== this.lastApplied || !this.isLoaded;
    if (applied && !this.stopped) {
      this.lastApplied = signature;
      this.opts.apply(policies, `dir:${this.opts.dir}`, total);
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

  private async readFileState(file: string, prev: FileState | undefined): Promise<FileState | undefined> {
    try {
      const st = await stat(file, { bigint: true });
      if (!st.isFile()) return undefined;
      // A file not touched since a read made well after its last write is not read again: periodic rescans of
      // a large mesh would otherwise allocate every file's text each time.
      const stamp = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
      if (prev && prev.settled && prev.stamp === stamp) return prev;
      const readAtMs = Date.now();
      const bytes = await readFile(file);
      const settled = readAtMs - Number(st.mtimeMs) > SETTLED_AFTER_WRITE_MS;
      const textDigest = digest(bytes);
      if (prev && prev.digest === textDigest) return { ...prev, stamp, settled };
      const text = bytes.toString("utf8");
      // Parsed in slices with setImmediate between them: a big file must not stall requests in flight.
      const parsed = await parsePolicyTextAsync(text, file, () => new Promise((resolve) => setImmediate(resolve)));
      for (const r of parsed.rejected) this.opts.log?.warn({ file, index: r.index, kind: r.kind, name: r.name, violations: r.violations }, "policy rejected");
      const policies = dedupe(keepLastGood(parsed.policies, parsed.rejected, prev && held(prev.entries))).policies;
      // What is held is copied out of the file's text (compact.ts), or else it would keep the whole text alive.
      const strings = new StringTable();
      const retain = this.opts.retain ?? (() => true);
      const entries = policies.map((p) => (retain(p) ? compact(p, strings) : strings.intern(policyKey(p))));
      return { digest: textDigest, stamp, settled, entries, rejected: parsed.rejected };
    } catch (err) {
      this.opts.log?.warn({ err, file }, "cannot read policy file; keeping its previous policies");
      return prev;
    }
  }
}

/**
 * A rejected document never replaces a good one: a rejected policy keeps its previous good version; a
 * document that cannot even be identified (YAML error) keeps every previous policy of the file not reloaded.
 */
export function keepLastGood(accepted: Policy[], rejected: readonly Rejected[], prevPolicies: readonly Policy[] | undefined): Policy[] {
  if (!prevPolicies || rejected.length === 0) return accepted;
  const key = (kind?: string, name?: string): string => `${kind}/${name}`;
  const have = new Set(accepted.map((p) => key(p.type, p.name)));
  const anonymous = rejected.some((r) => !r.kind || !r.name);
  const rejectedKeys = new Set(rejected.map((r) => key(r.kind, r.name)));
  const kept = prevPolicies.filter((p) => !have.has(key(p.type, p.name)) && (anonymous || rejectedKeys.has(key(p.type, p.name))));
  return [...accepted, ...kept];
}

/** The files' policies in order, a later file's policy replacing an earlier one of the same key (as compile() does). */
function combine(files: Iterable<FileState>): { policies: Policy[]; total: number } {
  const byKey = new Map<string, Policy | undefined>();
  for (const f of files) for (const e of f.entries) typeof e === "string" ? byKey.set(e, undefined) : byKey.set(policyKey(e), e);
  const policies = [...byKey.values()].filter((p): p is Policy => p !== undefined);
  return { policies, total: byKey.size };
}

function digest(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("base64");
}
