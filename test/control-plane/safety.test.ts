// Hostile request bodies get a clear 4xx problem body, never a crash or a hang, and the server keeps serving.
import test from "ava";
import { ApiError } from "../../extproc/control-plane/problems.js";
import { parseYamlSafe } from "../../extproc/control-plane/safety.js";
import { call, mtp, startTestControlPlane, tempDir } from "./helpers.js";

const PATH = "/meshes/default/meshtrafficpermissions/p";

const BILLION_LAUGHS = [
  "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]",
  "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]",
  "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]",
  "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]",
  "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]",
  "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]",
  "type: MeshTrafficPermission",
  "name: p",
].join("\n");

const deepBlock = (levels: number) => Array.from({ length: levels }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n") + " x\n";

/** `later`: refused after parsing (by UTF-8 decoding or resource validation), not by parseYamlSafe. */
const BAD_INPUTS: Array<{ what: string; body: string | Buffer; expect: RegExp; later?: true }> = [
  { what: "YAML alias bomb", body: BILLION_LAUGHS, expect: /alias/i },
  { what: "a single YAML alias", body: "type: MeshTrafficPermission\nname: &n p\nmesh: *n\n", expect: /alias/i },
  { what: "deep flow nesting", body: "type: MeshTrafficPermission\nname: p\nspec: " + "[".repeat(100_000) + "]".repeat(100_000), expect: /nests deeper/ },
  { what: "deep block nesting", body: deepBlock(200), expect: /nests deeper/ },
  { what: "a huge document (too many nodes, one per line)", body: "type: MeshTrafficPermission\nname: p\nlabels:\n" + Array.from({ length: 30_000 }, (_, i) => `  k${i}: v`).join("\n"), expect: /more than \d+ nodes/ },
  { what: "a huge document (too many nodes, one line)", body: JSON.stringify({ ...mtp("p"), labels: Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`k${i}`, "v"])) }), expect: /more than \d+ nodes/ },
  { what: "non-UTF-8 bytes", body: Buffer.from([0x74, 0x79, 0x70, 0x65, 0x3a, 0x20, 0xff, 0xfe, 0x0a]), expect: /UTF-8/, later: true },
  { what: "several YAML documents", body: "type: MeshTrafficPermission\nname: p\n---\ntype: MeshTrafficPermission\nname: q\n", expect: /not valid YAML/ },
  { what: "broken YAML", body: "type: [unclosed\n", expect: /not valid YAML/ },
  { what: "duplicate keys", body: "type: MeshTrafficPermission\nname: p\nname: q\n", expect: /not valid YAML/ },
  { what: "an empty body", body: "", expect: /empty/ },
  { what: "a scalar instead of a resource", body: "42", expect: /Resource is not valid|mapping/, later: true },
];

for (const c of BAD_INPUTS) {
  // Promptness is the parser's own time: a request's wall time also counts the other tests sharing the machine.
  if (!c.later) test(`safety › given ${c.what}, when parsed, then it is refused within 2 s of CPU time`, (t) => {
    const text = c.body as string;
    const started = process.cpuUsage();
    t.throws(() => parseYamlSafe(text), { instanceOf: ApiError });
    const used = process.cpuUsage(started);
    t.true((used.user + used.system) / 1000 < 2000, `${(used.user + used.system) / 1000} ms of CPU`);
  });

  test(`safety › ${c.what} is rejected with 400 and a clear message`, async (t) => {
    const dir = await tempDir();
    const cp = await startTestControlPlane(dir.path);
    t.teardown(async () => {
      await cp.stop();
      await dir.remove();
    });
    const res = await call(cp.url, "PUT", PATH, c.body, { "content-type": "application/yaml" });
    t.is(res.status, 400, JSON.stringify(res.body));
    t.regex(`${res.body.detail} ${JSON.stringify(res.body.invalid_parameters ?? [])}`, c.expect);
    t.is((await call(cp.url, "GET", "/")).status, 200, "server still serving");
    t.is((await call(cp.url, "GET", PATH)).status, 404, "nothing stored");
  });
}

test("safety › a body over the size limit is refused with 413 without reading it all", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path, { limits: { maxBodyBytes: 64 * 1024 } });
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const huge = "x".repeat(5 * 1024 * 1024);
  const res = await fetch(cp.url + PATH, { method: "PUT", body: huge }).then(
    async (r) => ({ status: r.status, body: (await r.json()) as { detail: string } }),
    () => ({ status: 0, body: { detail: "connection closed" } }),
  );
  // Node may see the socket closed before it reads the 413; either way the upload was cut short.
  t.true(res.status === 413 || res.status === 0, `status ${res.status}`);
  if (res.status === 413) t.regex(res.body.detail, /larger than 65536 bytes/);
  t.is((await call(cp.url, "GET", "/")).status, 200, "server still serving");
});
