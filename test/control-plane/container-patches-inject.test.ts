// End to end: the real `meshext inject --control-plane` CLI against the embedded control plane on a real socket.
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import test from "ava";
import { parse } from "yaml";
import { call, containerPatch, startTestControlPlane, tempDir } from "./helpers.js";

const CLI = fileURLToPath(new URL("../../extproc/cli.js", import.meta.url));

/** Async on purpose: the control plane runs in this process, so a sync spawn would block it from answering. */
function inject(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, "inject", ...args], { env: { PATH: process.env.PATH ?? "" } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

function podAnnotated(patches: string): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\n  namespace: demo\n  annotations:\n    kuma.io/container-patches: "${patches}"\nspec:\n  containers:\n  - name: app\n    image: example/app:1\n`;
}

async function setUp(t: { teardown(fn: () => Promise<void>): void }) {
  const dir = await tempDir();
  const cp = await startTestControlPlane(join(dir.path, "cp"), { token: "s3cret" });
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  return { cp, dir };
}

test("control-plane › given a ContainerPatch PUT to the embedded control plane, when meshext inject --control-plane runs, then stdout has the patched containers (exit 0)", async (t) => {
  const { cp, dir } = await setUp(t);
  const spec = {
    sidecarPatch: [{ op: "add", path: "/securityContext/privileged", value: "true" }],
    meshextSidecarPatch: [{ op: "add", path: "/env/-", value: { name: "MESHEXT_DATAPLANE_TAGS", value: "kuma.io/service=web" } }],
    initPatch: [{ op: "add", path: "/securityContext/seccompProfile", value: '{"type": "RuntimeDefault"}' }],
  };
  const put = await call(cp.url, "PUT", "/containerpatches/hardened", containerPatch("hardened", spec), { authorization: "Bearer s3cret" });
  t.is(put.status, 201, JSON.stringify(put.body));
  const file = join(dir.path, "pod.yaml");
  await writeFile(file, podAnnotated("hardened"));

  const r = await inject(["--control-plane", cp.url, "-f", file]);

  t.is(r.code, 0, r.stderr);
  t.is(r.stderr, "");
  const pod = parse(r.stdout);
  const byName = (list: Array<{ name: string }>, name: string) => list.find((c) => c.name === name) as Record<string, any>;
  t.is(byName(pod.spec.initContainers, "meshext-sidecar").securityContext.privileged, true);
  t.deepEqual(byName(pod.spec.initContainers, "meshext-sidecar").env.at(-1), { name: "MESHEXT_DATAPLANE_TAGS", value: "kuma.io/service=web" });
  t.deepEqual(byName(pod.spec.initContainers, "meshext-init").securityContext.seccompProfile, { type: "RuntimeDefault" });
});

test("control-plane › given no ContainerPatch of that name, when meshext inject --control-plane runs, then it exits non-zero with empty stdout", async (t) => {
  const { cp, dir } = await setUp(t);
  const file = join(dir.path, "pod.yaml");
  await writeFile(file, podAnnotated("missing"));

  const r = await inject(["--control-plane", cp.url, "-f", file]);

  t.not(r.code, 0);
  t.is(r.code, 1);
  t.is(r.stdout, "");
  t.regex(r.stderr, /ContainerPatch "missing".*containerpatches\/missing \(ContainerPatch missing not found\)/);
});
