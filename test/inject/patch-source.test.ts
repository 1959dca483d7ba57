// ContainerPatch sources: the --patches directory and the control plane on a local server (port 0).
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { controlPlaneSource, loadPatchDir, PatchSourceError } from "../../extproc/inject/patch-source.js";
import { PATCH_DIR, podYaml, run } from "./helpers.js";

const PRIVILEGED = {
  type: "ContainerPatch",
  name: "privileged",
  creationTime: "2024-01-01T00:00:00Z",
  spec: { sidecarPatch: [{ op: "add", path: "/securityContext/privileged", value: "true" }] },
};

interface FakeControlPlane {
  url: string;
  requests: { path: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

/** Serves `resources` at /containerpatches/{name}; `status` overrides the answer for every request. */
async function fakeControlPlane(resources: Record<string, unknown>, status?: number): Promise<FakeControlPlane> {
  const requests: FakeControlPlane["requests"] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ path: req.url ?? "", headers: req.headers });
    const name = decodeURIComponent((req.url ?? "").replace(/^\/containerpatches\//, ""));
    const found = resources[name];
    const code = status ?? (found ? 200 : 404);
    res.writeHead(code, { "content-type": "application/json" });
    res.end(JSON.stringify(code === 200 ? found : { title: "Could not retrieve a resource", detail: "Not found" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise((r) => server.close(() => r())) };
}

test("inject › control plane: GET /containerpatches/{name} supplies the patch, with the bearer token", async (t) => {
  const cp = await fakeControlPlane({ privileged: PRIVILEGED });
  t.teardown(() => cp.close());
  const outcome = await run(podYaml("privileged"), controlPlaneSource(cp.url, "s3cret"));
  t.true(outcome.ok && outcome.output.includes("privileged: true"));
  t.deepEqual(cp.requests.map((r) => r.path), ["/containerpatches/privileged"]);
  t.is(cp.requests[0]!.headers.authorization, "Bearer s3cret");
});

test("inject › control plane: a 404 refuses injection as patch_not_found", async (t) => {
  const cp = await fakeControlPlane({});
  t.teardown(() => cp.close());
  const outcome = await run(podYaml("privileged"), controlPlaneSource(cp.url, ""));
  t.false(outcome.ok);
  if (!outcome.ok) {
    t.is(outcome.failure.code, "patch_not_found");
    t.regex(outcome.failure.message, /containerpatches\/privileged \(Not found\)/);
  }
});

test("inject › control plane: a 500 or a dead server refuses injection as unavailable", async (t) => {
  const cp = await fakeControlPlane({}, 500);
  const broken = await run(podYaml("privileged"), controlPlaneSource(cp.url, ""));
  await cp.close();
  const dead = await run(podYaml("privileged"), controlPlaneSource(cp.url, ""));
  for (const outcome of [broken, dead]) t.is(!outcome.ok && outcome.failure.code, "patch_source_unavailable");
});

test("inject › control plane: an invalid resource or one with another name is refused", async (t) => {
  const cp = await fakeControlPlane({
    privileged: { ...PRIVILEGED, spec: { sidecarPatch: [{ op: "explode", path: "/" }] } },
    other: PRIVILEGED,
  });
  t.teardown(() => cp.close());
  const invalid = await run(podYaml("privileged"), controlPlaneSource(cp.url, ""));
  const renamed = await run(podYaml("other"), controlPlaneSource(cp.url, ""));
  t.regex(!invalid.ok ? invalid.failure.message : "", /spec\.sidecarPatch\[0\]\.op/);
  t.regex(!renamed.ok ? renamed.failure.message : "", /name: is "privileged", expected "other"/);
});

test("inject › control plane: each patch is fetched once per run, however many workloads use it", async (t) => {
  const cp = await fakeControlPlane({ privileged: PRIVILEGED });
  t.teardown(() => cp.close());
  const input = podYaml("privileged") + "---\n" + podYaml("privileged").replace("name: app", "name: b");
  t.true((await run(input, controlPlaneSource(cp.url, ""))).ok);
  t.is(cp.requests.length, 1);
});

test("inject › patch dir: multi-document files load, unknown names are not found", async (t) => {
  const source = await loadPatchDir(PATCH_DIR);
  t.is((await source.get("memory-2gi")).status, "found");
  t.is((await source.get("broken-json")).status, "invalid");
  t.is((await source.get("nope")).status, "not_found");
});

test("inject › patch dir: a duplicate name, a nameless document or bad YAML fails loading", async (t) => {
  const cases: Record<string, string> = {
    duplicate: "kind: ContainerPatch\nmetadata: {name: a}\n---\nkind: ContainerPatch\nmetadata: {name: a}\n",
    nameless: "kind: ContainerPatch\nspec: {}\n",
    "bad-yaml": "kind: ContainerPatch\nmetadata: {name: [\n",
  };
  for (const [title, text] of Object.entries(cases)) {
    const dir = mkdtempSync(join(tmpdir(), "meshext-patches-"));
    writeFileSync(join(dir, "p.yaml"), text);
    await t.throwsAsync(loadPatchDir(dir), { instanceOf: PatchSourceError }, title);
  }
  await t.throwsAsync(loadPatchDir(join(tmpdir(), "meshext-no-such-dir")), { message: /--patches: cannot read/ });
});
