// The Dataplanes what-if replays for: every `type: Dataplane` document of the given files, read by the engine's
// own Dataplane reader (or every Dataplane a control plane holds); problems are messages naming the source.
import { readFile } from "node:fs/promises";
import { dataplaneFromObject, type Dataplane } from "../policy/documents/dataplane.js";
import { isObj } from "../policy/documents/issues.js";
import { parseDocuments } from "../policy/documents/parse.js";
import { listAll, RestError, type RestTarget } from "./rest-client.js";

export async function readDataplanes(files: readonly string[]): Promise<{ dataplanes: Dataplane[]; problems: string[] }> {
  const dataplanes: Dataplane[] = [];
  const problems: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      problems.push(`--dataplane: cannot read ${file}: ${(err as Error).message}`);
      continue;
    }
    let found = 0;
    for (const doc of parseDocuments(text)) {
      if (doc.violations) problems.push(...doc.violations.map((v) => `--dataplane ${file}: document ${doc.index}: ${v.message}`));
      if (!isObj(doc.value) || doc.value.type !== "Dataplane") continue;
      found++;
      const { dataplane, violations } = dataplaneFromObject(doc.value);
      if (dataplane) dataplanes.push(dataplane);
      else problems.push(...violations.map((v) => `--dataplane ${file}: document ${doc.index}: ${v.field}: ${v.message}`));
    }
    if (found === 0) problems.push(`--dataplane ${file}: no document with type: Dataplane`);
  }
  return { dataplanes, problems };
}

/** Every Dataplane of every mesh from a control plane (`GET /dataplanes`, all pages). */
export async function dataplanesFrom(target: RestTarget): Promise<{ dataplanes: Dataplane[]; problems: string[] }> {
  let items: unknown[];
  try {
    items = await listAll(target, "/dataplanes");
  } catch (err) {
    if (err instanceof RestError) return { dataplanes: [], problems: [`--control-plane: ${err.message}`] };
    throw err;
  }
  const dataplanes = items.flatMap((r) => dataplaneFromObject(r).dataplane ?? []);
  return { dataplanes, problems: [] };
}
