// document items › what a read keeps per document: its index line (one-key lines), and the parsing of a document into items, once per digest, paced, with deprecation counts.
import test from "ava";
import { stringify } from "yaml";
import { DocumentParses, type DocItem, indexLine, oneKeyItems } from "../../extproc/policy-source/document-items.js";
import type { Dataplane } from "../../extproc/policy/model/dataplane.js";

const dataplane: Dataplane = { mesh: "default", name: "dp", proxyType: "Sidecar", inbounds: [{ name: "8080", port: 8080, tags: { "kuma.io/service": "backend" } }] };
const deprecated = (name: string, svc: string) =>
  stringify({ type: "MeshTrafficPermission", name, mesh: "default", spec: { targetRef: { kind: "MeshService", name: svc }, from: [{ targetRef: { kind: "MeshService", name: "web" }, default: { action: "Allow" } }] } });
const current = (name: string, svc?: string) =>
  stringify({ type: "MeshTrafficPermission", name, mesh: "default", spec: { targetRef: svc ? { kind: "Dataplane", labels: { "kuma.io/service": svc } } : { kind: "Mesh" }, rules: [{ default: { allow: [{ spiffeID: { type: "Exact", value: "spiffe://default/web" } }] } }] } });

const K = "MeshTrafficPermission/default/x";
const lines: Array<[string, DocItem[], { line: string; byNumber: boolean }]> = [
  ["one policy not held", [{ key: K }], { line: `h\t${K}`, byNumber: false }],
  ["one policy not held, with warnings", [{ key: K, warns: true }], { line: `h\t${K}\tw`, byNumber: false }],
  ["one held policy", [{ key: K, policy: {} as never }], { line: "h", byNumber: true }],
  ["two policies not held", [{ key: K }, { key: `${K}2` }], { line: "h", byNumber: true }],
  ["no items", [], { line: "h", byNumber: true }],
  ["one resource", [{ resource: {} as never }], { line: "h", byNumber: true }],
  ["a key with a tab", [{ key: "a\tb" }], { line: "h", byNumber: true }],
  ["a key with a newline", [{ key: "a\nb" }], { line: "h", byNumber: true }],
];
for (const [name, items, want] of lines) {
  test(`document items › given a document of ${name}, then its index line is ${want.byNumber ? "its digest alone, its items kept by number" : "digest, tab, key"}`, (t) => {
    t.deepEqual(indexLine("h", items), want);
  });
}

test("document items › given one-key index lines, then their items are the key, and warns when marked", (t) => {
  t.deepEqual(oneKeyItems(`h\t${K}`), [{ key: K }]);
  t.deepEqual(oneKeyItems(`h\t${K}\tw`), [{ key: K, warns: true }]);
  for (const items of [[{ key: K }], [{ key: K, warns: true as const }]]) t.deepEqual(oneKeyItems(indexLine("h", items).line), items, "what indexLine writes reads back");
});

test("document items › given documents of held and dropped policies with and without warnings, when parsed, then held ones are kept whole, dropped ones as keys marked when they warn, and the warnings counted", async (t) => {
  const parses = new DocumentParses({ file: "p.yaml", dataplane, pause: async () => {} });
  t.deepEqual(parses.warnedHeld, []);
  const held = await parses.items(deprecated("a", "backend"), "1");
  const heldClean = await parses.items(current("n"), "2");
  const dropped = await parses.items(deprecated("x", "svc-x"), "3");
  const droppedClean = await parses.items(current("m", "svc-y"), "4");
  const mesh = await parses.items("type: Mesh\nname: default\n", "5");
  const view = (items: DocItem[] | undefined) => items?.map((i) => ("key" in i ? { key: i.key, policy: i.policy?.name, warns: i.warns } : "resource" in i ? { resource: `${i.resource.kind}/${i.resource.name}` } : "rejected"));
  t.deepEqual(view(held), [{ key: "MeshTrafficPermission/default/a", policy: "a", warns: undefined }]);
  t.false("warns" in held![0]!, "a held policy is not marked: it is reported as held");
  t.deepEqual(view(heldClean), [{ key: "MeshTrafficPermission/default/n", policy: "n", warns: undefined }]);
  t.deepEqual(view(dropped), [{ key: "MeshTrafficPermission/default/x", policy: undefined, warns: true }]);
  t.deepEqual(view(droppedClean), [{ key: "MeshTrafficPermission/default/m", policy: undefined, warns: undefined }]);
  t.false("warns" in droppedClean![0]!);
  t.deepEqual(view(mesh), [{ resource: "Mesh/default" }]);
  t.deepEqual(parses.warnedHeld.map((p) => p.name), ["a"], "held policies with warnings only");
  t.is(parses.warnedNotHeld, 1, "x only");
  t.is(parses.count, 5);
});

test("document items › given a digest parsed before in the same read, when asked again, then the same items come back without parsing again", async (t) => {
  const parses = new DocumentParses({ file: "p.yaml", dataplane, pause: async () => {} });
  const first = await parses.items(deprecated("x", "svc-x"), "d");
  const again = await parses.items(deprecated("x", "svc-x"), "d");
  t.is(again, first);
  t.is(parses.count, 1);
  t.is(parses.warnedNotHeld, 1, "counted once");
});

test("document items › given a document with a `...` line, a comment or an anchor, when parsed, then it is outside the plain subset", async (t) => {
  for (const text of [`${current("n")}...\n`, `# a comment\n${current("n")}`, `${current("n")}labels:\n  team: a&b\n`]) {
    const parses = new DocumentParses({ file: "p.yaml", pause: async () => {} });
    t.is(await parses.items(text, "d"), undefined, text);
    t.is(parses.count, 0);
  }
});

test("document items › given 60 documents parsed, then the caller is paused after every 25th", async (t) => {
  let pauses = 0;
  const parses = new DocumentParses({ file: "p.yaml", pause: async () => void pauses++ });
  for (let i = 0; i < 60; i++) await parses.items(current(`p${i}`), `d${i}`);
  t.is(parses.count, 60);
  t.is(pauses, 2);
});
