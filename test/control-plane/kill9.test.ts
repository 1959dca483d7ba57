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
  t.teardown(() => void first.child.kill("SIGKILL"));
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
  await until(() => acked.size >= 40, "40 acknowledged writes");
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

test("kill9 › SIGKILL during overwrites of existing resources leaves each one whole, old or new", async (t) => {
  // Planted bug this catches: writeFileAtomic writing the target in place (open "w", write, no temp file,
  // no rename). Creating new names never shows it, since a half-created file is a new name nobody read;
  // overwriting does: a reader racing the writes, or the restart after the kill, finds a truncated file.
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  const first = await startChild(dir.path);
  t.teardown(() => void first.child.kill("SIGKILL"));
  const names = ["o0", "o1", "o2", "o3"];
  const padding = (round: number) => String(round % 10).repeat(200_000);
  // given four stored resources
  for (const name of names) t.is((await call(first.url, "PUT", `/meshes/default/meshtrafficpermissions/${name}`, { ...mtp(name), labels: { round: "0", padding: padding(0) } })).status, 201);
  const mtpDir = join(dir.path, "meshes", "default", "meshtrafficpermissions");
  const ackedRounds = new Map<string, Set<string>>(names.map((n) => [n, new Set(["0"])]));
  let stop = false;
  // when four writers overwrite them in rounds while the test reads the files, and the process is killed mid-stream
  const writer = async (name: string) => {
    for (let round = 1; !stop; round++) {
      try {
        const res = await call(first.url, "PUT", `/meshes/default/meshtrafficpermissions/${name}`, { ...mtp(name), labels: { round: String(round), padding: padding(round) } });
        if (res.status === 200 || res.status === 201) ackedRounds.get(name)!.add(String(round));
      } catch {
        return; // connection refused/reset after the kill
      }
    }
  };
  const partialReads: string[] = [];
  const reader = async () => {
    while (!stop) {
      for (const name of names) {
        const text = await readFile(join(mtpDir, `${name}.yaml`), "utf8").catch(() => "");
        if (!isWhole(text, name)) partialReads.push(`${name}.yaml: ${text.length} bytes`);
      }
    }
  };
  const running = [...names.map(writer), reader()];
  await until(() => [...ackedRounds.values()].reduce((n, s) => n + s.size, 0) >= 40, "40 acknowledged writes");
  first.child.kill("SIGKILL");
  await new Promise((r) => first.child.once("exit", r));
  stop = true;
  await Promise.all(running);

  // then no read during the run saw a half-written file, every file is whole after the kill,
  // and a restart serves each resource at a round that was sent (the last acknowledged one or a later one)
  t.deepEqual(partialReads.slice(0, 5), [], `${partialReads.length} partial reads while overwriting`);
  for (const name of names) t.true(isWhole(await readFile(join(mtpDir, `${name}.yaml`), "utf8"), name), `${name}.yaml is whole after the kill`);
  const second = await startChild(dir.path);
  t.teardown(() => void second.child.kill("SIGKILL"));
  for (const name of names) {
    const res = await call(second.url, "GET", `/meshes/default/meshtrafficpermissions/${name}`);
    t.is(res.status, 200, `${name} is served after the restart`);
    const round = Number(res.body.labels.round);
    const lastAcked = Math.max(...[...ackedRounds.get(name)!].map(Number));
    t.true(round >= lastAcked, `${name}: served round ${round}, last acknowledged ${lastAcked}`);
    t.is(res.body.labels.padding, padding(round), `${name} carries its round's whole body`);
  }
});

/** Polls `done` every 5ms; throws after 30s so a store that stops acknowledging fails the test instead of hanging it. */
async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`no ${what} within 30s`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A stored resource file that parses and carries its whole padding. */
function isWhole(text: string, name: string): boolean {
  try {
    const doc = parseYaml(text);
    return doc?.name === name && typeof doc.labels?.padding === "string" && doc.labels.padding.length === 200_000;
  } catch {
    return false;
  }
}
