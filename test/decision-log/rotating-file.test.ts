// The decision-log file and its writer (extproc/decision-log/writer.ts) on a real temp directory: when the file
// rotates (to the byte), how many rotated files are kept, the writer's chunks and buffer to the byte, and after close.
import test, { type ExecutionContext } from "ava";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { BufferedLineWriter, RotatingFileSink, type LineSink } from "../../extproc/decision-log/writer.js";

function tempFile(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), "meshext-rotating-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, "d.log");
}

const read = (path: string) => (existsSync(path) ? readFileSync(path, "utf8") : undefined);

test("rotating file › given a 10-byte limit, when writes reach it exactly, then no rotation; one byte past it, then PATH moves to PATH.1", async (t) => {
  const path = tempFile(t);
  let rotations = 0;
  const sink = new RotatingFileSink(path, 10, 3, () => rotations++);
  await sink.open();
  // When 6 then 4 bytes are written (exactly the limit), then 1 more
  await sink.write(Buffer.from("aaaaa\n"));
  await sink.write(Buffer.from("bbb\n"));
  t.is(rotations, 0);
  t.is(read(path), "aaaaa\nbbb\n");
  await sink.write(Buffer.from("c"));
  await sink.close();
  // Then the full file became PATH.1 and PATH holds the new byte
  t.is(rotations, 1);
  t.is(read(`${path}.1`), "aaaaa\nbbb\n");
  t.is(read(path), "c");
});

test("rotating file › given an existing file near the limit, when the sink opens it, then it counts its size and rotates before the next write", async (t) => {
  const path = tempFile(t);
  writeFileSync(path, "old-line\n");
  const sink = new RotatingFileSink(path, 10, 3, () => {});
  await sink.open();
  await sink.write(Buffer.from("new\n"));
  await sink.close();
  t.is(read(`${path}.1`), "old-line\n");
  t.is(read(path), "new\n");
});

test("rotating file › given an empty file, when a chunk larger than the limit is written, then it is written there, with no rotation", async (t) => {
  const path = tempFile(t);
  let rotations = 0;
  const sink = new RotatingFileSink(path, 4, 3, () => rotations++);
  await sink.open();
  await sink.write(Buffer.from("longer-than-four\n"));
  await sink.close();
  t.is(rotations, 0);
  t.is(read(path), "longer-than-four\n");
  t.false(existsSync(`${path}.1`));
});

test("rotating file › given two files kept, when it rotates four times, then PATH, PATH.1 and PATH.2 hold the newest, in order, and nothing more", async (t) => {
  const path = tempFile(t);
  const sink = new RotatingFileSink(path, 2, 2, () => {});
  // Without open(): the first write opens the file
  for (const c of ["1\n", "2\n", "3\n", "4\n", "5\n"]) await sink.write(Buffer.from(c));
  await sink.close();
  t.is(read(path), "5\n");
  t.is(read(`${path}.1`), "4\n");
  t.is(read(`${path}.2`), "3\n");
  t.false(existsSync(`${path}.3`));
});

test("rotating file › given one file kept, when it rotates twice, then PATH.1 holds the previous file only", async (t) => {
  const path = tempFile(t);
  const sink = new RotatingFileSink(path, 2, 1, () => {});
  for (const c of ["1\n", "2\n", "3\n"]) await sink.write(Buffer.from(c));
  await sink.close();
  t.is(read(path), "3\n");
  t.is(read(`${path}.1`), "2\n");
  t.false(existsSync(`${path}.2`));
});

test("rotating file › given a rotated file that cannot be moved, when the sink rotates, then the write fails instead of losing it", async (t) => {
  const path = tempFile(t);
  // Given PATH.1 and PATH.2 present and PATH.3 a non-empty directory (moving PATH.2 onto it fails, and not with ENOENT)
  writeFileSync(`${path}.1`, "one\n");
  writeFileSync(`${path}.2`, "two\n");
  mkdirSync(`${path}.3`);
  writeFileSync(join(`${path}.3`, "x"), "x");
  writeFileSync(path, "full\n");
  const sink = new RotatingFileSink(path, 5, 3, () => {});
  await sink.open();
  // When the next write needs a rotation
  await t.throwsAsync(sink.write(Buffer.from("next\n")));
  // Then it failed before moving anything
  t.is(read(`${path}.2`), "two\n");
  t.is(read(`${path}.1`), "one\n");
  t.is(read(path), "full\n");
});

test("rotating file › given a path in a missing directory, then open fails with a message naming the flag and the path", async (t) => {
  const sink = new RotatingFileSink("/nonexistent-dir/d.log", 4096, 3, () => {});
  await t.throwsAsync(sink.open(), { message: /^--decision-log: cannot open \/nonexistent-dir\/d\.log for appending: .*ENOENT/ });
});

test("rotating file › given a closed sink, when it is written again, then it reopens the file and appends", async (t) => {
  const path = tempFile(t);
  const sink = new RotatingFileSink(path, 4096, 3, () => {});
  await sink.write(Buffer.from("one\n"));
  await sink.close();
  await sink.write(Buffer.from("two\n"));
  await sink.close();
  t.is(read(path), "one\ntwo\n");
});

test("rotating file › given a FIFO whose reader is slower than the writer, when a chunk larger than the pipe is written, then it arrives whole", async (t) => {
  const fifo = tempFile(t) + ".fifo";
  execFileSync("mkfifo", [fifo]);
  // Given a reader (cat, into a file) that has the FIFO open, so the sink's non-blocking open succeeds
  const out = fifo + ".out";
  // that waits half a second before reading, so the 64 KiB pipe fills and the writer meets EAGAIN
  const reader = spawn("sh", ["-c", `exec 3<"${fifo}"; sleep 0.5; exec cat <&3 > "${out}"`], { stdio: "ignore" });
  // listened for from the start: cat can exit while the sink is still closing, before a later listener exists
  const readerExited = new Promise((r) => reader.once("exit", r));
  t.teardown(() => void reader.kill("SIGKILL"));
  const sink = new RotatingFileSink(fifo, 1 << 30, 1, () => {});
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      await sink.open();
      break;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  // When 1 MiB goes in one write (a pipe holds 64 KiB: the writer meets EAGAIN and partial writes)
  const chunk = Buffer.from(Array.from({ length: 1 << 14 }, (_, i) => String(i).padStart(63, "0")).join("\n") + "\n");
  t.is(chunk.length, 1 << 20);
  await sink.write(chunk);
  await sink.close();
  await readerExited;
  // Then the reader got every byte, in order
  t.true(readFileSync(out).equals(chunk));
});

test("rotating file › given a sink never opened, or closed twice, then close resolves", async (t) => {
  const path = tempFile(t);
  await t.notThrowsAsync(new RotatingFileSink(path, 4096, 3, () => {}).close());
  const sink = new RotatingFileSink(path, 4096, 3, () => {});
  await sink.write(Buffer.from("x\n"));
  await sink.close();
  await t.notThrowsAsync(sink.close());
});

test("stdout sink › given a chunk, when written, then it reaches the process's standard output whole", (t) => {
  const writer = pathToFileURL(fileURLToPath(new URL("../../extproc/decision-log/writer.js", import.meta.url))).href;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", `import { StdoutSink } from ${JSON.stringify(writer)}; const s = new StdoutSink(); await s.open(); await s.write(Buffer.from("a\\nb\\n")); await s.close();`], { encoding: "utf8" });
  t.is(r.status, 0, r.stderr);
  t.is(r.stdout, "a\nb\n");
});

/** A sink that records each chunk it is given. */
function recordingSink(): LineSink & { chunks: string[]; closed: boolean } {
  const s = { chunks: [] as string[], closed: false, open: async () => {}, write: async (c: Buffer) => void s.chunks.push(c.toString()), close: async () => void (s.closed = true) };
  return s;
}

const writerOn = (sink: LineSink, bufferBytes: number, chunkBytes: number, written: number[] = []) =>
  new BufferedLineWriter(sink, { bufferBytes, chunkBytes, onWritten: (n) => written.push(n), onDropped: () => {}, onError: () => {} });

test("line writer › given a 10-byte chunk size, when lines pushed in one go are written, then each chunk is filled to exactly 10 bytes, never more", async (t) => {
  const sink = recordingSink();
  const written: number[] = [];
  const w = writerOn(sink, 1000, 10, written);
  // When four 5-byte lines (newline included) and a 12-byte one are pushed in the same tick
  for (const l of ["aaaa", "bbbb", "cccc", "dddd", "eeeeeeeeeee", "f"]) w.push(l);
  t.is(w.pending, 6);
  await w.close();
  // Then: two full chunks, the long line alone, then the last one; every line counted written
  t.deepEqual(sink.chunks, ["aaaa\nbbbb\n", "cccc\ndddd\n", "eeeeeeeeeee\n", "f\n"]);
  t.deepEqual(written, [2, 2, 1, 1]);
  t.is(w.pending, 0);
  t.true(sink.closed);
});

test("line writer › given a 10-byte chunk size, when a 5-byte and a 6-byte line are pushed together, then they go in two chunks (11 bytes do not fit)", async (t) => {
  const sink = recordingSink();
  const w = writerOn(sink, 1000, 10);
  w.push("aaaa");
  w.push("bbbbb");
  await w.close();
  t.deepEqual(sink.chunks, ["aaaa\n", "bbbbb\n"]);
});

test("line writer › given a 10-byte buffer, then lines filling it exactly are accepted, and once written the room is back", async (t) => {
  const sink = recordingSink();
  const w = writerOn(sink, 10, 4096);
  t.true(w.push("aaaa"));
  t.true(w.push("bbbb"));
  t.false(w.push(""), "an eleventh byte does not fit");
  await new Promise((r) => setTimeout(r, 20));
  t.true(w.push("cccc"));
  t.true(w.push("dddd"));
  await w.close();
  t.deepEqual(sink.chunks, ["aaaa\nbbbb\n", "cccc\ndddd\n"]);
});

test("line writer › given a closed writer, when a line is pushed, then it is refused and never written", async (t) => {
  const sink = recordingSink();
  const w = writerOn(sink, 1000, 4096);
  w.push("before");
  await w.close();
  t.false(w.push("after"));
  await new Promise((r) => setTimeout(r, 20));
  t.deepEqual(sink.chunks, ["before\n"]);
});
