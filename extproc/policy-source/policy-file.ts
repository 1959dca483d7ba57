// One file of a policy directory: read, parse, validate, keep last good versions of rejected policies and resources, and
// hold only what might select this dataplane. Runs on the main thread or in parse-worker.ts (no logging here).
import * as crypto from "node:crypto";
import { readFile } from "node:fs/promises";
import { compact, StringTable } from "../policy/documents/compact.js";
import { dedupe } from "../policy/selection/policy-set.js";
import type { Dataplane } from "../policy/documents/dataplane.js";
import type { KumaVersion } from "../policy/model/kuma-version.js";
import type { Rejected } from "../policy/documents/parse-simple.js";
import type { Resource } from "../policy/documents/resources.js";
import { mightSelect } from "../policy/selection/select.js";
import { policyKey, type Policy } from "../policy/model/types.js";
import { keepLastGood, keepLastGoodBy, keptSetAsideKeys, kindAndName, withFailClosedMeshes } from "./last-good.js";
import { readByDocuments, type DocumentIndex } from "./file-documents.js";
import { keyFilter } from "./key-filter.js";

/** A read this long after a file's mtime saw its final content for that mtime (coarse-timestamp filesystems included). */
const SETTLED_AFTER_WRITE_MS = 2000;

export interface FileState {
  /** Digest of the text last parsed: an unchanged file is not parsed again (content, not mtime, so same-tick rewrites count). */
  digest: string;
  /** inode, size, mtime and ctime (ns) when last read, and whether that read came well after the last write. */
  stamp: string;
  settled: boolean;
  /** The file's distinct policies that are held, in order. */
  held: Policy[];
  /** Keys (type/mesh/name) of the file's policies not held, one per line: one string however many (for duplicates across files). */
  dropped: string;
  droppedCount: number;
  /** A Bloom filter of the dropped keys (key-filter.ts), so combining files rarely splits `dropped`. */
  droppedFilter?: Uint32Array;
  /** `kind: Mesh` and service resources of the file (all held: `to[]` entries resolve against them). */
  resources: Resource[];
  rejected: Rejected[];
  /** What the read kept of each document (a file in the plain YAML subset), so the next read parses only changed documents. */
  documents?: DocumentIndex;
}

/** What a read needs: the file, its stat stamp, what was held before, and the dataplane to select for (none: hold all). */
export interface FileJob {
  file: string;
  stamp: string;
  mtimeMs: number;
  prev?: Pick<FileState, "digest" | "held" | "dropped" | "droppedCount" | "droppedFilter"> & { resources?: Resource[]; documents?: DocumentIndex; rejected?: number };
  dataplane?: Dataplane;
  /** Read a plain-YAML file document by document, reusing its unchanged documents (false: parse it whole). @default true */
  byDocuments?: boolean;
  /** Whose validators and selection rules apply. @default the engine default (2.14) */
  kumaVersion?: KumaVersion;
}

/** A held policy that uses deprecated Kuma fields (logged by the caller). */
export interface Warned {
  kind: string;
  name: string;
  warnings: unknown[];
}

/** The new state, `unchanged` (same content; only stamp and settled are new), or the error that kept the file from being read. */
export type FileOutcome = { state: FileState; warned: Warned[]; warnedNotHeld: number; parsedDocuments: number } | { unchanged: { stamp: string; settled: boolean } } | { error: string };

/** Each job's outcome in order, one file at a time (the main thread's loads and the parse worker's batch). */
export async function readPolicyFiles(jobs: readonly FileJob[], pause: () => Promise<void>): Promise<FileOutcome[]> {
  const outcomes: FileOutcome[] = [];
  for (const job of jobs) outcomes.push(await readPolicyFile(job, pause));
  return outcomes;
}

export async function readPolicyFile(job: FileJob, pause: () => Promise<void>): Promise<FileOutcome> {
  try {
    const readAtMs = Date.now();
    const bytes = await readFile(job.file);
    const settled = readAtMs - job.mtimeMs > SETTLED_AFTER_WRITE_MS;
    const textDigest = digest(bytes);
    if (job.prev?.digest === textDigest) return { unchanged: { stamp: job.stamp, settled } };
    const text = bytes.toString("utf8");
    const byDocuments = job.byDocuments !== false && await readByDocuments({ file: job.file, text, ...(job.prev ? { prev: job.prev } : {}), ...(job.dataplane ? { dataplane: job.dataplane } : {}), ...(job.kumaVersion ? { kumaVersion: job.kumaVersion } : {}), digest: documentDigest, pause });
    if (byDocuments) {
      const { held, dropped, resources, rejected, warnedHeld, warnedNotHeld, index, parsed } = byDocuments;
      // Dropped keys the same as the previous read's (an in-place edit): its list and filter stay.
      const droppedKeys = dropped ? droppedState(dropped) : { dropped: job.prev!.dropped, droppedCount: job.prev!.droppedCount, ...(job.prev!.droppedFilter ? { droppedFilter: job.prev!.droppedFilter } : {}) };
      const state: FileState = { digest: textDigest, stamp: job.stamp, settled, held, ...droppedKeys, resources, rejected, documents: index };
      const warned = warnedHeld.map((p) => ({ kind: p.type, name: p.name, warnings: p.warnings }));
      return { state, warned, warnedNotHeld, parsedDocuments: parsed };
    }
    // The yaml library is loaded only for a text outside the plain subset: a parse worker fed plain texts starts without it.
    const { parsePolicyTextAsync } = await import("../policy/documents/parse.js");
    const parsed = await parsePolicyTextAsync(text, job.file, pause, { kumaVersion: job.kumaVersion });
    const policies = dedupe(keepLastGood(parsed.policies, parsed.rejected, job.prev?.held)).policies;
    // Resources keep their last good versions too; a rejected Mesh with none counts as mTLS on.
    const resources = withFailClosedMeshes(keepLastGoodBy(parsed.resources, parsed.rejected, job.prev?.resources, (r) => kindAndName(r.kind, r.name)), parsed.rejected) as Resource[];
    // What is held is copied out of the file's text (policy/documents/compact.ts), or else it would keep the whole text alive.
    const strings = new StringTable();
    const dp = job.dataplane;
    const keep = (p: Policy) => !dp || mightSelect(p, dp, job.kumaVersion);
    const held = policies.filter(keep).map((p) => compact(p, strings));
    const dropped = [...policies.filter((p) => !keep(p)).map(policyKey), ...keptSetAsideKeys(job.prev, policies.map(policyKey), parsed.rejected)]; // a rejection keeps set-aside keys overriding earlier files
    const state: FileState = { digest: textDigest, stamp: job.stamp, settled, held, ...droppedState(dropped, strings), resources: compact(resources, strings), rejected: parsed.rejected };
    // Deprecations are listed for held policies only: each policy is reported by the sidecars it selects,
    // not by every sidecar of the mesh; the others are counted.
    const warned = held.filter((p) => p.warnings.length > 0).map((p) => ({ kind: p.type, name: p.name, warnings: p.warnings }));
    const warnedNotHeld = policies.filter((p) => p.warnings.length > 0).length - warned.length;
    return { state, warned, warnedNotHeld, parsedDocuments: parsed.policies.length + parsed.resources.length + parsed.rejected.length };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** A file state's fields for these dropped keys: one string of them, their count and their filter. */
function droppedState(keys: string[], strings = new StringTable()): Pick<FileState, "dropped" | "droppedCount" | "droppedFilter"> {
  return { dropped: strings.intern(keys.join("\n")), droppedCount: keys.length, droppedFilter: keyFilter(keys) };
}

/**
 * A document's digest, to tell a changed document from an unchanged one of the same file (not a security
 * boundary: sha1 is enough). crypto.hash (Node ≥ 20.12) hashes in one call; a hash object per document cost
 * 2-3× as much for the 1 000 short documents of a file.
 */
export function documentDigest(text: string): string {
  return oneShot ? oneShot("sha1", text, "base64") : crypto.createHash("sha1").update(text).digest("base64");
}

const oneShot: ((algorithm: string, data: string, encoding: "base64") => string) | undefined = typeof crypto.hash === "function" ? crypto.hash : undefined;

export function digest(data: string | Uint8Array): string {
  return crypto.createHash("sha256").update(data).digest("base64");
}
