// Follows --dataplane-file: when the file's Dataplane (labels, tags, inbounds) changes, hands the new one to
// `onChange` (which re-selects the policy set). A file that cannot be read or is invalid keeps the current one.
import { unwatchFile, watchFile } from "node:fs";
import type { Dataplane } from "../policy/documents/dataplane.js";
import type { KumaVersion } from "../policy/model/kuma-version.js";
import { dataplaneFromFile } from "./from-config.js";

export interface DataplaneFileWatchOptions {
  file: string;
  intervalMs: number;
  current: Dataplane;
  /** The pinned --kuma-version (3.0 reads inbounds without tags). */
  kumaVersion?: KumaVersion;
  onChange: (dp: Dataplane) => Promise<void>;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** Starts polling the file's stat; returns the function that stops it. */
export function watchDataplaneFile(o: DataplaneFileWatchOptions): () => void {
  let current = o.current;
  let busy = Promise.resolve();
  const check = async () => {
    let next: Dataplane;
    try {
      next = dataplaneFromFile(o.file, o.kumaVersion).dataplane;
    } catch (err) {
      o.log.warn({ file: o.file, err: (err as Error).message }, "dataplane file unreadable or invalid; keeping the current dataplane");
      return;
    }
    if (JSON.stringify(next) === JSON.stringify(current)) return;
    if (next.mesh !== current.mesh) {
      o.log.warn({ file: o.file, mesh: next.mesh, current: current.mesh }, "dataplane file moved to another mesh; a restart is needed, keeping the current dataplane");
      return;
    }
    current = next;
    o.log.info({ file: o.file, inbounds: next.inbounds }, "dataplane changed; re-selecting policies");
    await o.onChange(next);
  };
  const listener = () => void (busy = busy.then(check));
  watchFile(o.file, { interval: o.intervalMs, persistent: false }, listener);
  return () => unwatchFile(o.file, listener);
}
