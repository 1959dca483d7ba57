// A real `meshext control-plane` child process killed with SIGKILL in the middle of a stream of writes:
// every acknowledged write is on disk, no file is half written, and a restart serves all of them.
import test from "ava";
import { spawn, type ChildProcess } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { call, mtp, tempDir } from "./helpers.js";

const CLI = fileURLToPath(new URL("../../extproc/cli.js", import.meta.url));

function startChild(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, "control-plane", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--log-level", "info"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (m) resolve({ child, url: m[1]! });
    });
    child.once("exit", (code) => reject(new Error(`control plane exited early (${code}): ${out}`)));
  });
}

test("kill9 › SIGKILL during writes loses no acknowledged write and leaves no half-written file", async (t) => {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  const first = await startChild(dir.path);
  const acked = new Set<string>();
  let stop = false;
  // Four writers with bodies big enough that a write takes a while; the kill lands mid-stream.
  const padding = "x".repeat(20_000);
  const writer = async (w: number) => {
    for (let i = 0; !stop; i++) {
      const name = `w${w}-${i}`;
      const body = { ...mtp(name), labels: { padding } };
      try {
        const res = await call(first.url, "PUT", `/meshes/default/meshtrafficpermissions/${name}`, body);
        if (res.status === 201) acked.add(name);
      } catch {
        return; // connection refused/reset after the kill
      }
    }
  };
  const writers = [0, 1, 2, 3].map(writer);
  while (acked.size < 40) await new Promise((r) => setTimeout(r, 5));
  first.child.kill("SIGKILL");
  await new Promise((r) => first.child.once("exit", r));
  stop = true;
  await Promise.all(writers);

  const mtpDir = join(dir.path, "meshes", "default", "meshtrafficpermissions");
  for (const file of (await readdir(mtpDir)).filter((f) => f.endsWith(".yaml"))) {
    const doc = parseYaml(await readFile(join(mtpDir, file), "utf8"));
    t.is(doc.name, file.slice(0, -5), `${file} is whole`);
    t.is(doc.labels.padding.length, padding.length, `${file} is whole`);
  }
  const second = await startChild(dir.path);
  t.teardown(() => void second.child.kill("SIGKILL"));
  const list = await call(second.url, "GET", "/meshes/default/meshtrafficpermissions?size=1000");
  const served = new Set(list.body.items.map((i: { name: string }) => i.name));
  const lost = [...acked].filter((n) => !served.has(n));
  t.deepEqual(lost, [], "every acknowledged write survived");
  t.true(acked.size >= 40);
  t.false((await readdir(mtpDir)).some((f) => f.startsWith(".tmp-")), "leftover temp files are cleaned at start");
});
