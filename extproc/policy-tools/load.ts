// Reads policy files and directories as the sidecar's --policies directory source does (*.yaml, *.yml, *.json,
// no dot files, in name order) and parses each with the engine's own parsePolicyText, for the chosen Kuma version.
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { parsePolicyText, type Rejected } from "../policy/documents/parse.js";
import { resourcesOf, type MeshResources, type Resource } from "../policy/documents/resources.js";
import type { KumaVersion } from "../policy/model/kuma-version.js";
import type { Policy } from "../policy/model/types.js";

const POLICY_FILE = /\.(ya?ml|json)$/i;

export interface LoadedFile {
  path: string;
  policies: Policy[];
  resources: Resource[];
  rejected: Rejected[];
}

export interface Loaded {
  files: LoadedFile[];
  /** Paths that could not be read (missing, permission, not a file), with why. */
  unreadable: Array<{ path: string; error: string }>;
}

/** The files named by `paths`: files as given, directories expanded to their policy files. */
export async function policyFiles(paths: readonly string[]): Promise<{ files: string[]; unreadable: Loaded["unreadable"] }> {
  const files: string[] = [];
  const unreadable: Loaded["unreadable"] = [];
  for (const path of paths) {
    try {
      const info = await stat(path);
      if (!info.isDirectory()) {
        files.push(path);
        continue;
      }
      const names = (await readdir(path)).filter((n) => POLICY_FILE.test(n) && !n.startsWith(".")).sort();
      files.push(...names.map((n) => join(path, n)));
    } catch (err) {
      unreadable.push({ path, error: (err as Error).message });
    }
  }
  return { files, unreadable };
}

export async function loadPolicies(paths: readonly string[], kumaVersion: KumaVersion | undefined): Promise<Loaded> {
  const { files, unreadable } = await policyFiles(paths);
  const loaded: Loaded = { files: [], unreadable };
  for (const path of files) {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (err) {
      unreadable.push({ path, error: (err as Error).message });
      continue;
    }
    const parsed = parsePolicyText(text, path, { kumaVersion });
    loaded.files.push({ path, ...parsed });
  }
  return loaded;
}

/** Every valid policy (file order) and the Mesh and service resources beside them. */
export function policySet(loaded: Loaded): { policies: Policy[]; resources: MeshResources } {
  return { policies: loaded.files.flatMap((f) => f.policies), resources: resourcesOf(loaded.files.flatMap((f) => f.resources)) };
}

/** Every document the engine refused, as one count. */
export function rejectedCount(loaded: Loaded): number {
  return loaded.files.reduce((n, f) => n + f.rejected.length, 0);
}
