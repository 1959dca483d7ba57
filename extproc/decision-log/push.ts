// --decision-log-push: a uniform sample (reservoir) of at most maxRecords decision records per interval, sent to the
// control plane as `POST /meshes/{mesh}/dataplanes/{name}/_decision-samples` {records: […]} in batches of at most
// batchBytes. Never blocks the request path; a send that fails drops its records (counted), nothing is retried.
import { describeFetchError } from "../fetch-error.js";
import type { Logger } from "../log.js";
import type { PushMetrics } from "./metrics.js";

export interface PushOptions {
  baseUrl: string;
  token: string;
  maxRecords: number;
  intervalMs: number;
  batchBytes: number;
  /** Who the records are for (the URL); undefined until known (records wait, bounded). */
  dataplane: () => { mesh: string; name: string } | undefined;
  metrics: PushMetrics;
  log: Logger;
  random?: () => number;
  nowMs?: () => number;
}

/** A push that has no answer by then is given up (its records counted as send_error). */
const PUSH_TIMEOUT_MS = 5000;
/** `{"records":[` + `]}` */
const ENVELOPE_BYTES = 13;

export class DecisionSamplePusher {
  private lines: string[] = [];
  private order: number[] = [];
  /** Records offered since the last send (the reservoir's denominator). */
  private seen = 0;
  private sequence = 0;
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  private lastWarnMs = -Infinity;
  private readonly random: () => number;
  private readonly nowMs: () => number;

  constructor(private readonly opts: PushOptions) {
    this.random = opts.random ?? Math.random;
    this.nowMs = opts.nowMs ?? Date.now;
  }

  /**
   * On the request path, before the record is built: the slot to `fill` with it, or -1 when it is not sampled (the
   * reservoir keeps each of the interval's records with probability maxRecords/seen; one is counted sampled_out).
   */
  slot(): number {
    this.seen++;
    const max = this.opts.maxRecords;
    if (this.lines.length < max) return this.lines.length;
    this.opts.metrics.dropped.inc({ reason: "sampled_out" });
    const slot = Math.floor(this.random() * this.seen);
    return slot < max ? slot : -1;
  }

  /** Puts the built record in the slot `slot()` gave (in the same synchronous step). */
  fill(slot: number, line: string): void {
    this.lines[slot] = line;
    this.order[slot] = this.sequence++;
  }

  start(): void {
    this.timer = setInterval(() => {
      // A send still in flight (a slow control plane) keeps this interval's sample for the next tick: still bounded.
      this.sending ??= this.send().finally(() => (this.sending = undefined));
    }, this.opts.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a send in flight; what is sampled and unsent is let go. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sending;
  }

  /** Sends what is sampled now (the timer calls it; tests may too). */
  async send(): Promise<void> {
    const dataplane = this.opts.dataplane();
    if (!dataplane || this.lines.length === 0) return;
    // Oldest first, as they were decided: the reservoir's replacements put them out of order.
    const picked = this.order.map((seq, i) => [seq, this.lines[i]!] as const).sort((a, b) => a[0] - b[0]).map(([, l]) => l);
    this.lines = [];
    this.order = [];
    this.seen = 0;
    const path = `/meshes/${encodeURIComponent(dataplane.mesh)}/dataplanes/${encodeURIComponent(dataplane.name)}/_decision-samples`;
    for (const batch of this.batches(picked)) await this.post(path, batch);
  }

  /** Consecutive runs of lines whose body fits batchBytes; a line that alone does not is dropped (too_large). */
  private batches(lines: readonly string[]): string[][] {
    const out: string[][] = [];
    let batch: string[] = [];
    let size = ENVELOPE_BYTES;
    for (const line of lines) {
      const bytes = Buffer.byteLength(line) + 1;
      if (ENVELOPE_BYTES + bytes > this.opts.batchBytes) {
        this.opts.metrics.dropped.inc({ reason: "too_large" });
        continue;
      }
      if (size + bytes > this.opts.batchBytes) {
        out.push(batch);
        batch = [];
        size = ENVELOPE_BYTES;
      }
      batch.push(line);
      size += bytes;
    }
    if (batch.length > 0) out.push(batch);
    return out;
  }

  private async post(path: string, batch: readonly string[]): Promise<void> {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (this.opts.token) headers.authorization = `Bearer ${this.opts.token}`;
    try {
      const res = await fetch(this.opts.baseUrl + path, { method: "POST", headers, body: `{"records":[${batch.join(",")}]}`, signal: AbortSignal.timeout(PUSH_TIMEOUT_MS) });
      const text = await res.text();
      if (res.ok) return void this.opts.metrics.pushed.inc(batch.length);
      const reason = res.status >= 500 ? "send_error" : "refused";
      this.opts.metrics.dropped.inc({ reason }, batch.length);
      this.warn({ status: res.status, answer: text.slice(0, 500), records: batch.length }, "decision samples refused by the control plane; dropped (meshext_decision_log_push_dropped_total)");
    } catch (err) {
      this.opts.metrics.dropped.inc({ reason: "send_error" }, batch.length);
      this.warn({ err: describeFetchError(err, PUSH_TIMEOUT_MS), records: batch.length }, "decision samples not sent; dropped (meshext_decision_log_push_dropped_total)");
    }
  }

  /** One warning a minute at most: a control plane that is down must not flood the log. */
  private warn(fields: Record<string, unknown>, msg: string): void {
    if (this.nowMs() - this.lastWarnMs < 60_000) return;
    this.lastWarnMs = this.nowMs();
    this.opts.log.warn({ ...fields, controlPlane: this.opts.baseUrl }, msg);
  }
}
