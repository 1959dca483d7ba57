// file documents › a plain-YAML policy file read document by document: what a fresh read gives, and what a later read that is not an in-place edit reuses.
import test from "ava";
import { stringify } from "yaml";
import { readByDocuments, type DocumentRead } from "../../extproc/policy-source/file-documents.js";
import { documentDigest } from "../../extproc/policy-source/policy-file.js";
import type { Dataplane } from "../../extproc/policy/model/dataplane.js";

const dataplane: Dataplane = { mesh: "default", name: "dp", proxyType: "Sidecar", inbounds: [{ name: "8080", port: 8080, tags: { "kuma.io/service": "backend" } }] };
const deprecated = (name: string, svc: string, client = "web") =>
  stringify({ type: "MeshTrafficPermission", name, mesh: "default", spec: { targetRef: { kind: "MeshService", name: svc }, from: [{ targetRef: { kind: "MeshService", name: client }, default: { action: "Allow" } }] } });
const current = (name: string, client = "web") =>
  stringify({ type: "MeshTrafficPermission", name, mesh: "default", spec: { targetRef: { kind: "Mesh" }, rules: [{ default: { allow: [{ spiffeID: { type: "Exact", value: `spiffe://default/${client}` } }] } }] } });
const mesh = "type: Mesh\nname: default\n";
const invalid = (name: string) => `type: MeshTrafficPermission\nname: ${name}\nmesh: default\nspec: {}\n`;
const key = (name: string) => `MeshTrafficPermission/default/${name}`;

async function read(docs: string[], prev?: DocumentRead, rejectedBefore = 0): Promise<DocumentRead> {
  const r = await readByDocuments({
    file: "p.yaml", text: docs.join("---\n"), dataplane, digest: documentDigest, pause: async () => {},
    ...(prev ? { prev: { held: prev.held, resources: prev.resources, documents: prev.index, rejected: rejectedBefore } } : {}),
  });
  if (!r) throw new Error("not read by documents");
  return r;
}
const view = (r: DocumentRead) => ({
  held: r.held.map((p) => `${p.name}:${JSON.stringify(p.spec)}`),
  dropped: r.dropped,
  resources: r.resources.map((x) => `${x.kind}/${x.name}`),
  rejected: r.rejected.map((x) => `${x.name}@${x.index}`),
});

test("file documents › given a text with a line that starts with --- but is more, when read by documents, then it is left to the whole-file parse", async (t) => {
  t.is(await readByDocuments({ file: "p.yaml", text: `${current("a")}--- !tag\n${current("b")}`, digest: documentDigest, pause: async () => {} }), undefined);
});

test("file documents › given held, dropped, resource and rejected documents, when read, then each lands in its list, a rejection numbered by its place in the file", async (t) => {
  const r = await read([current("a"), deprecated("x", "svc-x"), mesh, invalid("bad"), deprecated("y", "svc-y"), invalid("worse")]);
  t.deepEqual(view(r), {
    held: [`a:${JSON.stringify({ targetRef: { kind: "Mesh" }, rules: [{ default: { allow: [{ spiffeID: { type: "Exact", value: "spiffe://default/web" } }] } }] })}`],
    dropped: [key("x"), key("y")],
    resources: ["Mesh/default"],
    rejected: ["bad@3", "worse@5"],
  });
  t.is(r.parsed, 6);
  t.true(r.index.lines.split("\n").every((l) => l.split("\t")[0]!.length === 22), "each line starts with the digest's first 22 characters");
});

test("file documents › given the same policy held twice with deprecated fields, when read, then only the later version (the one in force) is warned about", async (t) => {
  const r = await read([deprecated("a", "backend", "web"), deprecated("a", "backend", "admin")]);
  t.is(r.held.length, 1);
  t.deepEqual(r.warnedHeld.map((p) => JSON.stringify(p.spec).includes("admin")), [true]);
});

test("file documents › given a read file, when a document is added (not an in-place edit), then only the new document is parsed and the result is a fresh read's", async (t) => {
  const docs = [current("a"), deprecated("x", "svc-x"), current("b"), mesh, deprecated("y", "svc-y")];
  const first = await read(docs);
  docs.splice(2, 0, current("c", "admin"));
  const second = await read(docs, first);
  t.is(second.parsed, 1, "held, dropped and resource documents are reused by digest");
  t.deepEqual(view(second), view(await read(docs)));
  t.is(second.index.lines, (await read(docs)).index.lines);
});

test("file documents › given a read file with a rejected document, when another document is edited, then only it is parsed and the rejection is still numbered by place", async (t) => {
  const docs = [current("a"), invalid("bad"), deprecated("x", "svc-x"), mesh];
  const first = await read(docs);
  docs[0] = current("a", "admin");
  const second = await read(docs, first, 1);
  t.is(second.parsed, 1);
  t.deepEqual(view(second), view(await read(docs)));
});

test("file documents › given a read that set nothing aside, when a document with no name is rejected, then the previous versions stay and no set-aside key is invented", async (t) => {
  // given a file whose one policy selects this dataplane: nothing set aside
  const first = await read([current("a")]);
  t.deepEqual(first.dropped, []);
  // when a second document arrives that names nothing (a rejection that keeps every previous version)
  const second = await readByDocuments({
    file: "p.yaml", text: [current("a"), "type: MeshTrafficPermission\nmesh: default\nspec: {}\n"].join("---\n"), dataplane, digest: documentDigest, pause: async () => {},
    prev: { held: first.held, resources: first.resources, documents: first.index, rejected: 0, dropped: "", droppedCount: 0 },
  });
  // then it is rejected, a stays held, and the set-aside list is still empty
  t.deepEqual(second && view(second), { held: view(first).held, dropped: [], resources: [], rejected: ["undefined@1"] });
});
