// Runs parse-worker.ts on a batch of file jobs and resolves with one outcome per job, or with the reason the
// worker itself failed (the caller then parses on the main thread).
import { Worker } from "node:worker_threads";
import type { FileJob, FileOutcome } from "./policy-file.js";

const WORKER_FILE = new URL("./parse-worker.js", import.meta.url);

export function parseInWorker(jobs: FileJob[]): Promise<FileOutcome[] | { workerFailed: string }> {
  return new Promise((resolve) => {
    const failAll = (message: string) => resolve({ workerFailed: message });
    let worker: Worker;
    try {
      worker = new Worker(WORKER_FILE, { workerData: jobs });
    } catch (err) {
      return failAll((err as Error).message);
    }
    let done = false;
    worker.once("message", (outcomes: FileOutcome[]) => {
      done = true;
      resolve(outcomes);
      void worker.terminate();
    });
    worker.once("error", (err) => !done && ((done = true), failAll(err.message)));
    worker.once("exit", (code) => !done && ((done = true), failAll(`exited with code ${code}`)));
  });
}
