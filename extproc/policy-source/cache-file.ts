// The last good policy set on disk, so a sidecar that starts while the control plane is down still decides
// with what it last knew. Raw resources are stored and re-validated on load (validation rules may have changed).
import { readFile } from "node:fs/promises";
import { writeFileAtomic } from "../atomic-file.js";

export interface PolicyCache {
  version: 1;
  savedAt: string;
  controlPlane: string;
  mesh: string;
  /** Resources exactly as the control plane served them (only the ones that passed validation). */
  items: unknown[];
}

export async function writePolicyCache(path: string, cache: Omit<PolicyCache, "version">): Promise<void> {
  await writeFileAtomic(path, JSON.stringify({ version: 1, ...cache }, null, 1) + "\n");
}

/** Reads the cache; a missing file is `undefined`, an unreadable one throws with the reason. */
export async function readPolicyCache(path: string): Promise<PolicyCache | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const doc = JSON.parse(text) as Partial<PolicyCache>;
  if (doc.version !== 1 || !Array.isArray(doc.items)) throw new Error("not a meshext policy cache (version 1)");
  return doc as PolicyCache;
}
