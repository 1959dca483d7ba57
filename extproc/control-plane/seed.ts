// Seeds an empty control-plane store from a directory of Kuma policy YAML (the repo's envoy/policies/ for
// `meshext up`), through the same parser/validator as PUT; invalid documents are logged and skipped.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { POLICY_TYPES, type Resource } from "../kuma-rest/resources.js";
import type { Logger } from "../log.js";
import { parsePolicyText } from "../policy/parse.js";
import type { ResourceStore } from "./store.js";

/** True when the store holds no policy of any supported kind. */
export function hasNoPolicies(store: ResourceStore): boolean {
  return POLICY_TYPES.every((t) => store.list(t.kind).length === 0);
}

/** Stores every valid policy of every *.yaml / *.yml / *.json file in `dir`; returns how many were stored. */
export async function seedFromDir(store: ResourceStore, dir: string, log: Logger): Promise<number> {
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => /\.(ya?ml|json)$/.test(f)).sort();
  } catch (err) {
    log.warn({ dir, err: (err as Error).message }, "no sample policies to seed the control plane with");
    return 0;
  }
  let stored = 0;
  for (const file of files) {
    const path = join(dir, file);
    const { policies, rejected } = parsePolicyText(await readFile(path, "utf8"), path);
    for (const r of rejected) log.warn({ file: path, index: r.index, kind: r.kind, name: r.name, violations: r.violations }, "sample policy rejected");
    for (const p of policies) {
      const type = POLICY_TYPES.find((t) => t.kind === p.type)!;
      const resource: Resource = { type: p.type, mesh: p.mesh, name: p.name, ...(Object.keys(p.labels).length ? { labels: p.labels } : {}), spec: p.spec as unknown as Record<string, unknown> };
      await store.put(type, resource);
      stored++;
    }
  }
  log.info({ dir, policies: stored }, "seeded the control plane with sample policies");
  return stored;
}
