// A policy file read document by document: a file in the plain YAML subset (policy/documents/simple-yaml.ts) is
// split at its `---` lines and only the documents whose text changed since the last read are parsed and
// validated; the others reuse what that read kept of them (their held policies, keys, resources, rejections).
// The file's result is then put together exactly as a whole-file parse would be (duplicates, last good versions),
// or, for documents edited in place, as the previous result with the edits swapped in (in-place-edits.ts).
import { compact } from "../policy/documents/compact.js";
import type { Dataplane } from "../policy/documents/dataplane.js";
import type { KumaVersion } from "../policy/model/kuma-version.js";
import type { Rejected } from "../policy/documents/parse-simple.js";
import type { Resource } from "../policy/documents/resources.js";
import { documentTexts } from "../policy/documents/simple-yaml.js";
import { policyKey, type Policy } from "../policy/model/types.js";
import { DIGEST_CHARS, type DocItem, type DocumentIndex, DocumentParses, indexLine, oneKeyItems } from "./document-items.js";
import { readInPlace } from "./in-place-edits.js";
import { keepLastGoodBy, kindAndName, setAsideKeys, withFailClosedMeshes } from "./last-good.js";

export type { DocItem, DocumentIndex } from "./document-items.js";

export interface DocumentRead {
  held: Policy[];
  /** Keys of the policies not held, in order; undefined when they are the previous read's (an in-place edit). */
  dropped: string[] | undefined;
  resources: Resource[];
  rejected: Rejected[];
  /** Held policies read from the documents parsed by this read that carry deprecation warnings (unchanged ones were reported when read). */
  warnedHeld: Policy[];
  /** Dropped policies of the documents parsed by this read that carry deprecation warnings. */
  warnedNotHeld: number;
  index: DocumentIndex;
  /** Documents parsed and validated by this read (the others were unchanged). */
  parsed: number;
}

export interface DocumentJob {
  file: string;
  text: string;
  /** The previous read of the file; `rejected` is how many documents it rejected. */
  prev?: { held: Policy[]; dropped?: string; droppedCount?: number; resources?: Resource[]; documents?: DocumentIndex; rejected?: number };
  dataplane?: Dataplane;
  kumaVersion?: KumaVersion;
  digest: (text: string) => string;
  /** Awaited every DOCUMENTS_PER_PAUSE parsed documents, so the caller's event loop keeps serving. */
  pause: () => Promise<void>;
}

type Entry = { key: string; policy?: Policy; warns?: true };

/** Reads `job.text` by documents, or undefined when the text is not in the plain subset (parse it whole then). */
export async function readByDocuments(job: DocumentJob): Promise<DocumentRead | undefined> {
  const texts = documentTexts(job.text);
  if (!texts) return undefined;
  const hashes = texts.map((text) => job.digest(text).slice(0, DIGEST_CHARS));
  const parses = new DocumentParses({ file: job.file, ...(job.dataplane ? { dataplane: job.dataplane } : {}), ...(job.kumaVersion ? { kumaVersion: job.kumaVersion } : {}), pause: job.pause });
  const prev = job.prev;
  if (prev?.documents && prev.rejected === 0) {
    const edited = await readInPlace(texts, hashes, { held: prev.held, resources: prev.resources ?? [], documents: prev.documents }, parses);
    if (edited) return { ...edited, dropped: undefined, rejected: [], warnedNotHeld: parses.warnedNotHeld, parsed: parses.count };
  }
  const { before, lineOf } = cachedDocuments(prev?.documents);
  const entries: Entry[] = [];
  const resources: Resource[] = [];
  const rejected: Rejected[] = [];
  const index: DocumentIndex = { lines: "", items: {} };
  const lines: string[] = [];
  let itemIndex = 0;
  for (const [n, text] of texts.entries()) {
    const hash = hashes[n]!;
    const cached = before.get(hash);
    const items = cached ?? (await parses.items(text, hash));
    if (!items) return undefined;
    const cachedLine = cached && lineOf.get(hash);
    if (cachedLine !== undefined) lines.push(cachedLine); // an unchanged one-key document: its line as it was
    else {
      const { line, byNumber } = indexLine(hash, items);
      lines.push(line);
      if (byNumber) index.items[n] = items;
    }
    for (const item of items) {
      if ("rejected" in item) rejected.push({ ...item.rejected, index: item.rejected.index + itemIndex });
      else if ("resource" in item) resources.push(item.resource);
      else entries.push(item);
    }
    itemIndex += items.length;
  }
  index.lines = lines.join("\n");
  // As a whole-file parse: last good versions of rejected policies and resources, then one policy per key.
  const prevEntries = [...(job.prev?.held ?? []).map((p): Entry => ({ key: policyKey(p), policy: p })), ...setAsideKeys(job.prev).map((key): Entry => ({ key }))]; // set-aside keys too: a rejection keeps them overriding earlier files
  const withLastGood = keepLastGoodBy(entries, rejected, job.prev ? prevEntries : undefined, typeAndName);
  const byKey = new Map<string, Entry>();
  for (const e of withLastGood) byKey.set(e.key, e);
  const distinct = [...byKey.values()];
  const kept = withFailClosedMeshes(keepLastGoodBy(resources, rejected, job.prev?.resources, (r) => kindAndName(r.kind, r.name)), rejected) as Resource[];
  return {
    held: distinct.filter((e) => e.policy).map((e) => e.policy!),
    dropped: distinct.filter((e) => !e.policy).map((e) => e.key),
    resources: compact(kept, parses.strings),
    rejected,
    // Of this read's documents only, and only those in force (a duplicate key's earlier version is not).
    warnedHeld: parses.warnedHeld.filter((p) => byKey.get(policyKey(p))?.policy === p),
    warnedNotHeld: parses.warnedNotHeld,
    index,
    parsed: parses.count,
  };
}

/** kindAndName of an entry (its key is type/mesh/name; a mesh name holds no `/`). */
function typeAndName(e: Entry): string {
  const first = e.key.indexOf("/");
  const second = e.key.indexOf("/", first + 1);
  return kindAndName(e.key.slice(0, first), e.key.slice(second + 1));
}

/** The previous read's documents by digest, and the index line of each one-key document (reused as it is). */
function cachedDocuments(index: DocumentIndex | undefined): { before: Map<string, DocItem[]>; lineOf: Map<string, string> } {
  const before = new Map<string, DocItem[]>();
  const lineOf = new Map<string, string>();
  if (!index) return { before, lineOf };
  index.lines.split("\n").forEach((line, n) => {
    const tab = line.indexOf("\t");
    if (tab === -1) {
      const items = index.items[n];
      if (items) before.set(line, items);
    } else {
      const hash = line.slice(0, tab);
      before.set(hash, oneKeyItems(line));
      lineOf.set(hash, line);
    }
  });
  return { before, lineOf };
}
