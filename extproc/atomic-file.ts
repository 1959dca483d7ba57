// Crash-safe file replacement: write a temp file beside the target, fsync it, rename it over the
// target, fsync the directory. A reader (or a restart after kill -9) sees the old or the new file, never half.
import { open, rename, unlink, mkdir } from "node:fs/promises";
import { dirname, basename, join } from "node:path";
import { randomBytes } from "node:crypto";

/** Prefix of temp files; loaders skip (and may delete) files that start with it. */
export const TEMP_PREFIX = ".tmp-";

export async function writeFileAtomic(path: string, data: string | Buffer): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `${TEMP_PREFIX}${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}`);
  const fh = await open(tmp, "w", 0o644);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } catch (err) {
    // A full disk fails here: the temp file goes, the target keeps its old version.
    await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw err;
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
  await fsyncDir(dir);
}

/** Removes a file and makes the removal durable; a missing file is not an error. */
export async function removeFileDurable(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    return;
  }
  await fsyncDir(dirname(path));
}

async function fsyncDir(dir: string): Promise<void> {
  // Directory fsync makes the rename/unlink itself durable; some platforms refuse it (EISDIR/EPERM), which is harmless.
  let fh;
  try {
    fh = await open(dir, "r");
    await fh.sync();
  } catch {
    // best effort
  } finally {
    await fh?.close().catch(() => {});
  }
}
