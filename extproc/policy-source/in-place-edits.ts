// The cheap case of reading a policy file again: its documents were edited in place (as many as before, each
// changed one still one policy of the same key, held as before, in a file that had no rejection). The new
// result is then the previous one with the changed held policies swapped in: unchanged documents are compared
// by position, not looked up, and the file's lists of keys are not built again.
import { type DocItem, type DocumentIndex, type DocumentParses, indexLine, oneKeyItems } from "./document-items.js";
import type { Policy } from "../policy/model/types.js";
import type { Resource } from "../policy/documents/resources.js";

/** What the previous read of the file gave, as far as this path needs it. */
export interface PreviousRead {
  held: Policy[];
  resources: Resource[];
  documents: DocumentIndex;
}

export interface InPlaceRead {
  held: Policy[];
  resources: Resource[];
  /** Held policies swapped in that carry deprecation warnings. */
  warnedHeld: Policy[];
  index: DocumentIndex;
}

interface Changed {
  n: number;
  lineStart: number;
  lineEnd: number;
}

/**
 * The read of `texts` (digests `hashes`) as an in-place edit of `prev`, or undefined when it is not one (the
 * caller reads it in full then; documents parsed here stay parsed in `parses`). The dropped keys, resources
 * and rejections (none) are the previous read's.
 */
export async function readInPlace(texts: readonly string[], hashes: readonly string[], prev: PreviousRead, parses: DocumentParses): Promise<InPlaceRead | undefined> {
  const changed = changedByPosition(hashes, prev.documents.lines);
  if (!changed) return undefined;
  const held = [...prev.held];
  const items: Record<number, DocItem[]> = { ...prev.documents.items };
  const warnedHeld: Policy[] = [];
  const pieces: string[] = [];
  let copiedTo = 0;
  const { lines } = prev.documents;
  for (const c of changed) {
    const line = lines.slice(c.lineStart, c.lineEnd);
    const before = line.includes("\t") ? oneKeyItems(line) : prev.documents.items[c.n]!;
    const after = await parses.items(texts[c.n]!, hashes[c.n]!);
    if (!after) return undefined;
    const [was, now] = [only(before), only(after)];
    if (!was || !now || was.key !== now.key || !was.policy !== !now.policy) return undefined;
    if (was.policy) {
      // A held policy shadowed by a later one of the same key is not in force; its new version is not either.
      const at = held.indexOf(was.policy);
      if (at !== -1) {
        held[at] = now.policy!;
        if (now.policy!.warnings.length > 0) warnedHeld.push(now.policy!);
      }
    }
    // The same key and holding: kept by number before (held) if and only if kept by number now.
    const next = indexLine(hashes[c.n]!, after);
    if (next.byNumber) items[c.n] = after;
    pieces.push(lines.slice(copiedTo, c.lineStart), next.line);
    copiedTo = c.lineEnd;
  }
  pieces.push(lines.slice(copiedTo));
  return { held, resources: prev.resources, warnedHeld, index: { lines: pieces.join(""), items } };
}

/** The one policy entry of a document, if that is all it holds. */
function only(items: DocItem[]): { key: string; policy?: Policy; warns?: true } | undefined {
  return items.length === 1 && "key" in items[0]! ? items[0] : undefined;
}

/** The documents whose digest differs from the previous read's line at the same position; undefined when the count differs. */
function changedByPosition(hashes: readonly string[], lines: string): Changed[] | undefined {
  const changed: Changed[] = [];
  let lineStart = 0;
  for (let n = 0; n < hashes.length; n++) {
    if (lineStart > lines.length) return undefined; // more documents than lines
    const next = lines.indexOf("\n", lineStart);
    const lineEnd = next === -1 ? lines.length : next;
    // Every line starts with a digest of DIGEST_CHARS characters (then a tab, or its end).
    if (!lines.startsWith(hashes[n]!, lineStart)) changed.push({ n, lineStart, lineEnd });
    lineStart = lineEnd + 1;
  }
  return lineStart === lines.length + 1 ? changed : undefined; // else fewer
}
