// A policy file read document by document: a file in the plain YAML subset (policy/documents/simple-yaml.ts) is
// split at its `---` lines and only the documents whose text changed since the last read are parsed and
// validated; the others reuse what that read kept of them (their held policies, keys, resources, rejections).
// The file's result is then put together exactly as a whole-file parse would be (duplicates, last good versions).
import { compact, StringTable } from "../policy/documents/compact.js";
import type { Dataplane } from "../policy/documents/dataplane.js";
import type { KumaVersion } from "../policy/model/kuma-version.js";
import { DOCUMENTS_PER_PAUSE, parseSimpleDocument, type Rejected } from "../policy/documents/parse-simple.js";
import type { Resource } from "../policy/documents/resources.js";
import { simpleDocumentTexts } from "../policy/documents/simple-yaml.js";
import { mightSelect } from "../policy/selection/select.js";
import { policyKey, type Policy } from "../policy/model/types.js";
import { keepLastGoodBy, kindAndName, withFailClosedMeshes } from "./last-good.js";

/** What one document yielded: a policy (held, or only its key), a resource, or a rejection (index within the document). */
export type DocItem = { key: string; policy?: Policy; warns?: true } | { resource: Resource } | { rejected: Rejected };

/**
 * What a read kept of each document, for the next read: one line per document, its text's digest, then a tab
 * and the policy key when the document was just one policy not held (most of a large mesh; a third field `w`
 * when it has deprecation warnings); the other documents' items by document number.
 */
export interface DocumentIndex {
  lines: string;
  items: Record<number, DocItem[]>;
}

export interface DocumentRead {
  held: Policy[];
  dropped: string[];
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
  prev?: { held: Policy[]; resources?: Resource[]; documents?: DocumentIndex };
  dataplane?: Dataplane;
  kumaVersion?: KumaVersion;
  digest: (text: string) => string;
  /** Awaited every DOCUMENTS_PER_PAUSE parsed documents, so the caller's event loop keeps serving. */
  pause: () => Promise<void>;
}

type Entry = { key: string; policy?: Policy; warns?: true };

/** Reads `job.text` by documents, or undefined when the text is not in the plain subset (parse it whole then). */
export async function readByDocuments(job: DocumentJob): Promise<DocumentRead | undefined> {
  const texts = simpleDocumentTexts(job.text);
  if (!texts) return undefined;
  const { before, lineOf } = cachedDocuments(job.prev?.documents);
  const strings = new StringTable();
  const entries: Entry[] = [];
  const resources: Resource[] = [];
  const rejected: Rejected[] = [];
  const index: DocumentIndex = { lines: "", items: {} };
  const lines: string[] = [];
  let parsed = 0;
  let itemIndex = 0;
  const warnedHeld: Policy[] = [];
  let warnedNotHeld = 0;
  for (const [n, text] of texts.entries()) {
    const hash = job.digest(text).slice(0, 22);
    let items = before.get(hash);
    if (!items) {
      const result = parseSimpleDocument(text, job.file, job.kumaVersion ? { kumaVersion: job.kumaVersion } : {});
      if (!result) return undefined;
      if (++parsed % DOCUMENTS_PER_PAUSE === 0) await job.pause();
      items = itemsOf(result, job.dataplane, job.kumaVersion, strings);
      for (const item of items) {
        if (!("key" in item)) continue;
        if (item.policy && item.policy.warnings.length > 0) warnedHeld.push(item.policy);
        else if (item.warns) warnedNotHeld++;
      }
    }
    const single = items.length === 1 ? items[0]! : undefined;
    const cachedLine = lineOf.get(hash);
    if (cachedLine !== undefined && items === before.get(hash)) lines.push(cachedLine); // an unchanged one-key document: its line as it was
    else if (single && "key" in single && !single.policy && !/[\t\n]/.test(single.key)) lines.push(`${hash}\t${single.key}${single.warns ? "\tw" : ""}`);
    else {
      lines.push(hash);
      index.items[n] = items;
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
  const prevEntries = (job.prev?.held ?? []).map((p): Entry => ({ key: policyKey(p), policy: p }));
  const withLastGood = keepLastGoodBy(entries, rejected, job.prev ? prevEntries : undefined, typeAndName);
  const byKey = new Map<string, Entry>();
  for (const e of withLastGood) byKey.set(e.key, e);
  const distinct = [...byKey.values()];
  const kept = withFailClosedMeshes(keepLastGoodBy(resources, rejected, job.prev?.resources, (r) => kindAndName(r.kind, r.name)), rejected) as Resource[];
  return {
    held: distinct.filter((e) => e.policy).map((e) => e.policy!),
    dropped: distinct.filter((e) => !e.policy).map((e) => e.key),
    resources: compact(kept, strings),
    rejected,
    // Of this read's documents only, and only those in force (a duplicate key's earlier version is not).
    warnedHeld: warnedHeld.filter((p) => byKey.get(policyKey(p))?.policy === p),
    warnedNotHeld,
    index,
    parsed,
  };
}

/** kindAndName of an entry (its key is type/mesh/name; a mesh name holds no `/`). */
function typeAndName(e: Entry): string {
  const first = e.key.indexOf("/");
  const second = e.key.indexOf("/", first + 1);
  return kindAndName(e.key.slice(0, first), e.key.slice(second + 1));
}

/** A document's items: held policies compacted, the others reduced to their key. */
function itemsOf(result: { policies: Policy[]; resources: Resource[]; rejected: Rejected[] }, dp: Dataplane | undefined, kumaVersion: KumaVersion | undefined, strings: StringTable): DocItem[] {
  const items: DocItem[] = [];
  for (const p of result.policies) {
    const held = !dp || mightSelect(p, dp, kumaVersion);
    items.push({ key: strings.intern(policyKey(p)), ...(held ? { policy: compact(p, strings) } : {}), ...(!held && p.warnings.length > 0 ? { warns: true as const } : {}) });
  }
  // Copied out of the text (as held policies are), so that what a read keeps never holds the file's text.
  for (const r of result.resources) items.push({ resource: compact(r, strings) });
  for (const r of result.rejected) items.push({ rejected: compact(r, strings) });
  return items;
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
      const [hash, key, warns] = line.split("\t");
      before.set(hash!, [{ key: key!, ...(warns ? { warns: true as const } : {}) }]);
      lineOf.set(hash!, line);
    }
  });
  return { before, lineOf };
}
