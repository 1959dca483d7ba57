// Writes log lines without ever blocking the caller: push() only appends to a bounded in-memory queue,
// which asynchronous writes drain to a sink (stdout's file descriptor, or a file that rotates at a size
// limit). A line that does not fit in the queue, or whose write fails, is dropped and reported.
import { constants, write as fdWrite } from "node:fs";
import { open, rename, type FileHandle } from "node:fs/promises";
import type { DropReason } from "./metrics.js";

export interface LineSink {
  /** Opens what needs opening (throws a readable error when it cannot). */
  open(): Promise<void>;
  write(chunk: Buffer): Promise<void>;
  close(): Promise<void>;
}

export interface BufferedLineWriterOptions {
  /** Most bytes (UTF-16 units, newline included) queued at once. */
  bufferBytes: number;
  /** Largest chunk handed to the sink in one write. */
  chunkBytes: number;
  onWritten(lines: number): void;
  onDropped(reason: DropReason, lines: number): void;
  onError(err: Error): void;
}

export class BufferedLineWriter {
  private queue: string[] = [];
  private queuedBytes = 0;
  private draining: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly sink: LineSink,
    private readonly opts: BufferedLineWriterOptions,
  ) {}

  /** Queues one line (without its newline); false when it was dropped. Never waits. */
  push(line: string): boolean {
    if (this.closed) return false;
    const bytes = line.length + 1;
    if (this.queuedBytes + bytes > this.opts.bufferBytes) {
      this.opts.onDropped("buffer_full", 1);
      return false;
    }
    this.queue.push(line);
    this.queuedBytes += bytes;
    this.draining ??= this.drain();
    return true;
  }

  /** Lines waiting to be written. */
  get pending(): number {
    return this.queue.length;
  }

  /** Writes what is queued, then closes the sink. */
  async close(): Promise<void> {
    this.closed = true;
    await this.draining;
    await this.sink.close();
  }

  private async drain(): Promise<void> {
    // Let the current burst of requests queue up first: fewer, larger writes.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.queue.length > 0) {
      let count = 0;
      let size = 0;
      while (count < this.queue.length && (count === 0 || size + this.queue[count]!.length + 1 <= this.opts.chunkBytes)) {
        size += this.queue[count]!.length + 1;
        count++;
      }
      const lines = this.queue.splice(0, count);
      this.queuedBytes -= size;
      try {
        await this.sink.write(Buffer.from(lines.join("\n") + "\n"));
        this.opts.onWritten(count);
      } catch (err) {
        this.opts.onDropped("write_error", count);
        this.opts.onError(err as Error);
      }
    }
    this.draining = undefined;
  }
}

/** Writes `chunk` to a file descriptor from libuv's thread pool (the event loop never waits on it). */
function writeAll(fd: number, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const step = (offset: number): void => {
      fdWrite(fd, chunk, offset, chunk.length - offset, null, (err, written) => {
        if (err && (err as NodeJS.ErrnoException).code === "EAGAIN") return void setTimeout(() => step(offset), 5);
        if (err) return reject(err);
        if (offset + written < chunk.length) return step(offset + written);
        resolve();
      });
    };
    step(0);
  });
}

/** Standard output (fd 1). Chunks up to PIPE_BUF (4 KiB) reach a pipe whole, between the process's other log lines. */
export class StdoutSink implements LineSink {
  static readonly CHUNK_BYTES = 4096;
  async open(): Promise<void> {}
  write(chunk: Buffer): Promise<void> {
    return writeAll(1, chunk);
  }
  async close(): Promise<void> {}
}

/** A file appended to and rotated when the next write would pass `maxBytes`: PATH → PATH.1 → … → PATH.maxFiles (the oldest goes). */
export class RotatingFileSink implements LineSink {
  static readonly CHUNK_BYTES = 64 * 1024;
  private handle: FileHandle | undefined;
  private size = 0;

  constructor(
    readonly path: string,
    private readonly maxBytes: number,
    private readonly maxFiles: number,
    private readonly onRotate: () => void,
  ) {}

  async open(): Promise<void> {
    try {
      // Non-blocking: opening a FIFO for writing would wait for a reader forever; this way it fails (ENXIO)
      // now, and a FIFO with a reader takes EAGAIN retries (writeAll). Regular files ignore the flag.
      this.handle = await open(this.path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK, 0o666);
      this.size = (await this.handle.stat()).size;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENXIO") throw new Error(`--decision-log: ${this.path} is a FIFO with no reader (start its reader first)`);
      throw new Error(`--decision-log: cannot open ${this.path} for appending: ${(err as Error).message}`);
    }
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.handle === undefined) await this.open();
    if (this.size > 0 && this.size + chunk.length > this.maxBytes) await this.rotate();
    try {
      await writeAll(this.handle!.fd, chunk);
    } catch (err) {
      // A write that failed part-way (disk full) leaves part of a line: cut the file back to its last whole
      // line, so the chunk is dropped whole and counted as exactly its lines.
      await this.handle?.truncate(this.size).catch(() => {});
      throw err;
    }
    this.size += chunk.length;
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }

  private async rotate(): Promise<void> {
    await this.close();
    for (let i = this.maxFiles - 1; i >= 1; i--) {
      await rename(`${this.path}.${i}`, `${this.path}.${i + 1}`).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "ENOENT") throw err;
      });
    }
    await rename(this.path, `${this.path}.1`);
    this.onRotate();
    await this.open();
  }
}
