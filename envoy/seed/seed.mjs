// One-shot: PUTs every document of envoy/policies/ (policies, the Mesh) into the control plane unless one of that
// name is already stored.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

const cp = process.env.CONTROL_PLANE ?? "http://127.0.0.1:5681";
const token = process.env.CONTROL_PLANE_TOKEN ?? "";
const dir = process.env.POLICIES ?? fileURLToPath(new URL("../policies/", import.meta.url));
const auth = token ? { authorization: `Bearer ${token}` } : {};

for (const file of readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort()) {
  for (const doc of parseAllDocuments(readFileSync(join(dir, file), "utf8"))) {
    const { type, mesh = "default", name } = doc.toJS() ?? {};
    if (!type || !name) continue;
    // A Mesh is global (/meshes/{name}); a mesh that only holds resources is served bare, without creationTime.
    const url = type === "Mesh" ? `${cp}/meshes/${name}` : `${cp}/meshes/${mesh}/${type.toLowerCase()}s/${name}`;
    const existing = await fetch(url);
    if (existing.status === 200 && (type !== "Mesh" || (await existing.json()).creationTime)) {
      console.log(`kept    ${type} ${mesh}/${name}`);
      continue;
    }
    const res = await fetch(url, { method: "PUT", headers: { "content-type": "application/yaml", ...auth }, body: doc.toString() });
    if (!res.ok) throw new Error(`PUT ${url}: ${res.status} ${await res.text()}`);
    console.log(`created ${type} ${mesh}/${name}`);
  }
}
