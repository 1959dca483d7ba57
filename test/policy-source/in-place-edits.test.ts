// file documents › in-place edits: a file read again after documents were edited in place (same count, same
// keys, selection unchanged, no rejection) gives what a fresh read of the same text gives, while parsing only
// the edited documents, keeping the unchanged policies' objects and the previous read's dropped keys.
import test from "ava";
import { stringify } from "yaml";
import { readByDocuments, type DocumentRead } from "../../extproc/policy-source/file-documents.js";
import { documentDigest } from "../../extproc/policy-source/policy-file.js";
import type { Dataplane } from "../../extproc/policy/model/dataplane.js";

const dataplane: Dataplane = { mesh: "default", name: "dp", proxyType: "Sidecar", inbounds: [{ name: "8080", port: 8080, tags: { "kuma.io/service": "backend" } }] };
/** A MeshTrafficPermission `name` on service `svc` (backend: held by the dataplane) allowing `client`. */
const mtp = (name: string, svc: string, client = "web", labels?: Record<string, string>) =>
  stringify({ type: "MeshTrafficPermission", name, mesh: "default", ...(labels ? { labels } : {}), spec: { targetRef: { kind: "MeshService", name: svc }, from: [{ targetRef: { kind: "MeshService", name: client }, default: { action: "Allow" } }] } });

const pause = async () => {};
async function read(docs: string[], prev?: DocumentRead, rejectedBefore = 0): Promise<DocumentRead> {
  const result = await readByDocuments({
    file: "p.yaml", text: docs.join("---\n"), dataplane, digest: documentDigest, pause,
    ...(prev ? { prev: { held: prev.held, resources: prev.resources, documents: prev.index, rejected: rejectedBefore } } : {}),
  });
  if (!result) throw new Error("not read by documents");
  return result;
}
/** What a read decides with (held policies: name, client allowed, labels; dropped keys) and keeps for the next read. */
const view = (r: DocumentRead, droppedBefore?: string[]) => ({
  index: r.index.lines,
  keptByNumber: Object.keys(r.index.items),
  held: r.held.map((p) => `${p.name}:${JSON.stringify(p.spec)}:${JSON.stringify(p.labels ?? {})}`),
  dropped: r.dropped ?? droppedBefore,
  resources: r.resources.length,
  rejected: r.rejected.length,
});

test("in-place edits › given a read file, when one held policy changes in place, then only it is parsed, it takes its old place, the rest keep their objects, and the result is a fresh read's", async (t) => {
  const docs = [mtp("a", "backend"), mtp("x", "svc-x"), mtp("b", "backend"), mtp("y", "svc-y")];
  const first = await read(docs);
  docs[0] = mtp("a", "backend", "admin");
  const second = await read(docs, first);
  t.is(second.parsed, 1);
  t.is(second.dropped, undefined, "the dropped keys are the previous read's");
  t.is(second.held[1], first.held[1], "b: the same object");
  t.not(second.held[0], first.held[0]);
  t.deepEqual(view(second, first.dropped), view(await read(docs)));
});

test("in-place edits › given a read file, when a policy the dataplane does not hold changes in place, then the held policies are the same objects and nothing else is parsed", async (t) => {
  const docs = [mtp("a", "backend"), mtp("x", "svc-x"), mtp("y", "svc-y")];
  const first = await read(docs);
  docs[2] = mtp("y", "svc-y", "web", { edit: "1" });
  const second = await read(docs, first);
  t.is(second.parsed, 1);
  t.is(second.dropped, undefined);
  t.is(second.held[0], first.held[0]);
  t.deepEqual(view(second, first.dropped), view(await read(docs)));
  t.is(second.warnedNotHeld, 1, "its deprecated fields are counted again");
  // and read again from that read, the next edit still compares by position
  docs[1] = mtp("x", "svc-x", "web", { edit: "2" });
  const third = await read(docs, second);
  t.is(third.parsed, 1);
  t.deepEqual(view(third, first.dropped), view(await read(docs)));
});

test("in-place edits › given a read file, when an edit renames a policy, changes what it selects, adds a document or removes one, then the file is put together in full (its dropped keys listed again)", async (t) => {
  const docs = [mtp("a", "backend"), mtp("x", "svc-x")];
  const first = await read(docs);
  for (const edited of [[mtp("a2", "backend"), docs[1]!], [docs[0]!, mtp("x", "backend")], [mtp("a", "svc-a"), docs[1]!], [...docs, mtp("z", "svc-z")], [docs[0]!]]) {
    const next = await read(edited, first);
    t.not(next.dropped, undefined);
    t.deepEqual(view(next), view(await read(edited)));
  }
});

test("in-place edits › given a policy defined twice in a file, when either copy changes in place, then the later copy is the one in force", async (t) => {
  const docs = [mtp("a", "backend", "one"), mtp("x", "svc-x"), mtp("a", "backend", "two")];
  const first = await read(docs);
  t.deepEqual(view(first).held.map((h) => h.includes('"two"')), [true]);
  docs[0] = mtp("a", "backend", "three");
  const earlierEdited = await read(docs, first);
  t.is(earlierEdited.held[0], first.held[0], "the earlier copy was not in force, nor is its new version");
  t.deepEqual(earlierEdited.warnedHeld, [], "so its deprecated fields are not reported");
  t.deepEqual(view(earlierEdited, first.dropped), view(await read(docs)));
  docs[2] = mtp("a", "backend", "four");
  const laterEdited = await read(docs, earlierEdited);
  t.deepEqual(laterEdited.warnedHeld.map((p) => p.name), ["a"], "the copy in force is reported");
  t.deepEqual(view(laterEdited, first.dropped), view(await read(docs)));
  t.true(laterEdited.held[0]!.spec !== first.held[0]!.spec);
});

test("in-place edits › given the previous read rejected a document, when another one changes in place, then the file is put together in full and the rejection keeps its last good version", async (t) => {
  const good = [mtp("a", "backend"), mtp("b", "backend")];
  const v1 = await read(good);
  const bad = stringify({ type: "MeshTrafficPermission", name: "b", mesh: "default", spec: { targetRef: { kind: "MeshService", name: "backend" }, from: [{ targetRef: { kind: "Mesh" }, default: { action: "Maybe" } }] } });
  const v2 = await read([good[0]!, bad], v1);
  t.is(v2.rejected.length, 1);
  const docs = [mtp("a", "backend", "admin"), bad];
  const v3 = await read(docs, v2, v2.rejected.length);
  t.not(v3.dropped, undefined, "put together in full");
  t.deepEqual(v3.held.map((p) => p.name), ["a", "b"], "b's last good version stays");
});

test("in-place edits › given a read file, when an edited document leaves the plain subset (a comment), then the read declines and the file is parsed whole", async (t) => {
  const docs = [mtp("a", "backend"), mtp("x", "svc-x")];
  const first = await read(docs);
  const result = await readByDocuments({ file: "p.yaml", text: [docs[0], `# now commented\n${docs[1]}`].join("---\n"), dataplane, digest: documentDigest, pause, prev: { held: first.held, resources: first.resources, documents: first.index, rejected: 0 } });
  t.is(result, undefined);
});

test("in-place edits › given a held policy edited in place, then it is warned about only when its new version has deprecated fields", async (t) => {
  const modern = (client: string) => stringify({ type: "MeshTrafficPermission", name: "a", mesh: "default", spec: { targetRef: { kind: "Mesh" }, rules: [{ default: { allow: [{ spiffeID: { type: "Exact", value: `spiffe://default/${client}` } }] } }] } });
  const docs = [modern("web"), mtp("x", "svc-x")];
  const first = await read(docs);
  docs[0] = modern("admin");
  const clean = await read(docs, first);
  t.is(clean.parsed, 1);
  t.is(clean.dropped, undefined, "an in-place edit");
  t.deepEqual(clean.warnedHeld, [], "no deprecated fields: nothing to warn about");
  docs[0] = mtp("a", "backend", "admin");
  const old = await read(docs, first);
  t.is(old.dropped, undefined, "an in-place edit");
  t.deepEqual(old.warnedHeld.map((p) => p.name), ["a"]);
});

test("in-place edits › given a held policy edited in place twice, then each read holds its latest version", async (t) => {
  const docs = [mtp("a", "backend"), mtp("x", "svc-x")];
  const first = await read(docs);
  docs[0] = mtp("a", "backend", "admin");
  const second = await read(docs, first);
  docs[0] = mtp("a", "backend", "ops");
  const third = await read(docs, second);
  t.is(third.dropped, undefined, "an in-place edit");
  t.deepEqual(view(third, first.dropped), view(await read(docs)));
  t.true(JSON.stringify(third.held[0]!.spec).includes("ops"));
});

test("in-place edits › given a Mesh resource edited in place, then the file is put together in full and the new resource is the one kept", async (t) => {
  const meshDoc = (mtls: boolean) => `type: Mesh\nname: default\n${mtls ? "mtls:\n  enabledBackend: ca-1\n  backends:\n    - name: ca-1\n      type: builtin\n" : ""}`;
  const docs = [mtp("a", "backend"), meshDoc(false)];
  const first = await read(docs);
  t.deepEqual(first.resources.map((r) => (r as { mtlsEnabled?: boolean }).mtlsEnabled), [false]);
  docs[1] = meshDoc(true);
  const second = await read(docs, first);
  t.deepEqual(second.resources.map((r) => (r as { mtlsEnabled?: boolean }).mtlsEnabled), [true]);
  t.deepEqual(view(second, first.dropped), view(await read(docs)));
});

test("in-place edits › given an empty document, when a policy is written into it, then the file is put together in full with the new policy", async (t) => {
  const docs = [mtp("a", "backend"), ""];
  const first = await read(docs);
  docs[1] = mtp("b", "backend");
  const second = await read(docs, first);
  t.deepEqual(second.held.map((p) => p.name), ["a", "b"]);
  t.deepEqual(view(second, first.dropped), view(await read(docs)));
});

test("in-place edits › given a file with a Mesh resource, when a policy is edited in place, then the previous read's resources are kept as they were", async (t) => {
  const docs = [mtp("a", "backend"), "type: Mesh\nname: default\n"];
  const first = await read(docs);
  docs[0] = mtp("a", "backend", "admin");
  const second = await read(docs, first);
  t.is(second.parsed, 1, "an in-place edit");
  t.is(second.resources, first.resources);
  t.deepEqual(view(second, first.dropped), view(await read(docs)));
});

test("in-place edits › given a previous read passed without its resources, when a policy is edited in place, then the file has no resources", async (t) => {
  const docs = [mtp("a", "backend")];
  const first = await read(docs);
  docs[0] = mtp("a", "backend", "admin");
  const second = await readByDocuments({ file: "p.yaml", text: docs.join("---\n"), dataplane, digest: documentDigest, pause, prev: { held: first.held, documents: first.index, rejected: 0 } });
  t.is(second?.parsed, 1, "an in-place edit");
  t.deepEqual(second?.resources, []);
});
