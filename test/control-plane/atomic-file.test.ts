// atomic-file › writeFileAtomic replaces an existing file as a whole (readers holding or opening the old
// file never see it truncated or half rewritten; the new content arrives under a new inode) and cleans up
// after a failed write; removeFileDurable removes, and a missing file is not an error.
import test from "ava";
import { mkdir, open, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { removeFileDurable, writeFileAtomic } from "../../extproc/atomic-file.js";
import { tempDir } from "./helpers.js";

// Planted bug these catch: writeFileAtomic writing the target in place — `open(path, "w")`, write,
// fsync, close — with no temp file and no rename. The first test then reads an empty (truncated) old
// handle and the same inode; the second sees empty or partial files while the overwrites run.

test("atomic-file › an open handle on the old file still reads the whole old content; the inode changes", async (t) => {
  // given an existing file of 64 KiB and a reader that opened it before the overwrite
  const dir = await tempDir("meshext-atomic-");
  t.teardown(() => dir.remove());
  const path = join(dir.path, "resource.yaml");
  const oldContent = "old\n".repeat(16_384);
  await writeFile(path, oldContent);
  const before = await stat(path);
  const reader = await open(path, "r");
  t.teardown(() => reader.close());
  // when the file is overwritten atomically
  const newContent = "new content\n".repeat(100);
  await writeFileAtomic(path, newContent);
  // then the old handle reads all of the old bytes, the path names a new inode holding the new bytes,
  // and no temp file is left beside it
  t.is((await reader.readFile("utf8")).length, oldContent.length);
  t.not((await stat(path)).ino, before.ino);
  t.is(await readFile(path, "utf8"), newContent);
  t.deepEqual(await readdir(dir.path), ["resource.yaml"]);
});

test("atomic-file › readers racing 100 overwrites see only whole old or whole new files", async (t) => {
  // given a 256 KiB file rewritten 100 times, alternating two whole contents
  const dir = await tempDir("meshext-atomic-");
  t.teardown(() => dir.remove());
  const path = join(dir.path, "resource.yaml");
  const size = 256 * 1024;
  const versions = ["a".repeat(size), "b".repeat(size)];
  await writeFile(path, versions[0]!);
  let writing = true;
  const seen: string[] = [];
  // when two readers read the file in a loop while the overwrites run
  const readerLoop = async () => {
    while (writing) {
      const text = await readFile(path, "utf8");
      if (text !== versions[0] && text !== versions[1]) seen.push(`${text.length} bytes starting ${JSON.stringify(text.slice(0, 8))}`);
    }
  };
  const readers = [readerLoop(), readerLoop()];
  for (let i = 1; i <= 100; i++) await writeFileAtomic(path, versions[i % 2]!);
  writing = false;
  await Promise.all(readers);
  // then no read saw a truncated or mixed file
  t.deepEqual(seen.slice(0, 5), [], `${seen.length} partial reads`);
});

test("atomic-file › a write into a missing directory creates it", async (t) => {
  const dir = await tempDir("meshext-atomic-");
  t.teardown(() => dir.remove());
  const path = join(dir.path, "meshes", "default", "r.yaml");
  await writeFileAtomic(path, "x\n");
  t.is(await readFile(path, "utf8"), "x\n");
});

test("atomic-file › a failed rename rejects and leaves no temp file behind", async (t) => {
  // given a directory where the file should go (rename of a file over a directory fails)
  const dir = await tempDir("meshext-atomic-");
  t.teardown(() => dir.remove());
  const path = join(dir.path, "resource.yaml");
  await mkdir(path);
  // when writing; then the write rejects and only the directory is there
  await t.throwsAsync(writeFileAtomic(path, "x\n"));
  t.deepEqual(await readdir(dir.path), ["resource.yaml"]);
});

test("atomic-file › removeFileDurable removes a file, and a missing file is not an error", async (t) => {
  const dir = await tempDir("meshext-atomic-");
  t.teardown(() => dir.remove());
  const path = join(dir.path, "resource.yaml");
  await writeFile(path, "x\n");
  await removeFileDurable(path);
  t.deepEqual(await readdir(dir.path), []);
  await t.notThrowsAsync(removeFileDurable(path));
  // but other errors are reported: a directory is not removed as a file
  await mkdir(path);
  await t.throwsAsync(removeFileDurable(path));
});
