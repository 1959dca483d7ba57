// What one read of a policy file keeps per document (its items and its line in the file's document index), and
// the parsing of a document text into those items, counted, paced and done at most once per read.
import { compact, StringTable } from "../policy/documents/compact.js";
import type { Dataplane } from "../policy/documents/dataplane.js";
import type { KumaVersion } from "../policy/model/kuma-version.js";
import { DOCUMENTS_PER_PAUSE, parseSimpleDocument, type Rejected } from "../policy/documents/parse-simple.js";
import type { Resource } from "../policy/documents/resources.js";
import { hasOnlySimpleCharacters } from "../policy/documents/simple-yaml.js";
import { mightSelect } from "../policy/selection/select.js";
import { policyKey, type Policy } from "../policy/model/types.js";

/** What one document yielded: a policy (held, or only its key), a resource, or a rejection (index within the document). */
export type DocItem = { key: string; policy?: Policy; warns?: true } | { resource: Resource } | { rejected: Rejected };

/** A document's digest as the index keeps it (characters of the base64 sha1). */
export const DIGEST_CHARS = 22;

/**
 * What a read kept of each document, for the next read: one line per document, its text's digest, then a tab
 * and the policy key when the document was just one policy not held (most of a large mesh; a third field `w`
 * when it has deprecation warnings); the other documents' items by document number.
 */
export interface DocumentIndex {
  lines: string;
  items: Record<number, DocItem[]>;
}

/** The index line of a document with digest `hash` and these items, and whether its items must be kept by number. */
export function indexLine(hash: string, items: DocItem[]): { line: string; byNumber: boolean } {
  const single = items.length === 1 ? items[0]! : undefined;
  if (single && "key" in single && !single.policy && !/[\t\n]/.test(single.key)) return { line: `${hash}\t${single.key}${single.warns ? "\tw" : ""}`, byNumber: false };
  return { line: hash, byNumber: true };
}

/** The items of a one-key line (digest, tab, key, and `\tw` when it warns). */
export function oneKeyItems(line: string): DocItem[] {
  const [, key, warns] = line.split("\t");
  return [{ key: key!, ...(warns ? { warns: true as const } : {}) }];
}

export interface ParseContext {
  file: string;
  dataplane?: Dataplane;
  kumaVersion?: KumaVersion;
  /** Awaited every DOCUMENTS_PER_PAUSE parsed documents, so the caller's event loop keeps serving. */
  pause: () => Promise<void>;
}

/** The documents one read parses: each digest at most once, with what they yield of deprecation warnings. */
export class DocumentParses {
  readonly strings = new StringTable();
  /** Documents parsed and validated by this read. */
  count = 0;
  /** Held policies read from the documents parsed here that carry deprecation warnings. */
  readonly warnedHeld: Policy[] = [];
  /** Dropped policies of the documents parsed here that carry deprecation warnings. */
  warnedNotHeld = 0;
  private readonly byDigest = new Map<string, DocItem[]>();

  constructor(private readonly ctx: ParseContext) {}

  /** The items of document `text` (digest `hash`), or undefined when it is outside the plain subset. */
  async items(text: string, hash: string): Promise<DocItem[] | undefined> {
    const known = this.byDigest.get(hash);
    if (known) return known;
    // Documents a read takes from the previous one were checked when they were parsed; a new one is checked here.
    if (!hasOnlySimpleCharacters(text)) return undefined;
    const { ctx } = this;
    const result = parseSimpleDocument(text, ctx.file, ctx.kumaVersion ? { kumaVersion: ctx.kumaVersion } : {});
    if (!result) return undefined;
    if (++this.count % DOCUMENTS_PER_PAUSE === 0) await ctx.pause();
    const items = itemsOf(result, ctx.dataplane, ctx.kumaVersion, this.strings);
    for (const item of items) {
      if (!("key" in item)) continue;
      if (item.policy && item.policy.warnings.length > 0) this.warnedHeld.push(item.policy);
      else if (item.warns) this.warnedNotHeld++;
    }
    this.byDigest.set(hash, items);
    return items;
  }
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
