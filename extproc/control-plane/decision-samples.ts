// The decision records sidecars push (`POST …/dataplanes/{name}/_decision-samples`), held in memory for dry runs:
// a ring of the newest records per dataplane, and one byte bound across all of them. Counts what it took and dropped.

export interface DecisionSampleLimits {
  /** Most records held per dataplane (the newest). */
  perDataplane: number;
  /** Most bytes (UTF-8 of the JSON lines) held across all dataplanes. */
  maxBytes: number;
}

/** Why held or pushed records were let go. */
export type SampleDropReason = "ring_full" | "memory_limit" | "dataplane_removed" | "refused";
export const SAMPLE_DROP_REASONS: readonly SampleDropReason[] = ["ring_full", "memory_limit", "dataplane_removed", "refused"];

/** How a push was answered. */
export type PushResult = "accepted" | "malformed" | "too_large" | "unknown_dataplane";
export const PUSH_RESULTS: readonly PushResult[] = ["accepted", "malformed", "too_large", "unknown_dataplane"];

interface Ring {
  lines: string[];
  bytes: number[];
  totalBytes: number;
}

export class DecisionSamples {
  private readonly rings = new Map<string, Ring>();
  private heldBytes = 0;
  private heldRecords = 0;
  /** Records accepted since start. */
  received = 0;
  readonly dropped = new Map<SampleDropReason, number>(SAMPLE_DROP_REASONS.map((r) => [r, 0]));
  readonly pushes = new Map<PushResult, number>(PUSH_RESULTS.map((r) => [r, 0]));

  constructor(readonly limits: DecisionSampleLimits) {}

  /** Appends `lines` (oldest first) to the dataplane's ring, then evicts past the bounds. */
  add(mesh: string, name: string, lines: readonly string[]): void {
    const key = keyOf(mesh, name);
    let ring = this.rings.get(key);
    if (!ring) {
      ring = { lines: [], bytes: [], totalBytes: 0 };
      this.rings.set(key, ring);
    }
    for (const line of lines) {
      const size = Buffer.byteLength(line);
      ring.lines.push(line);
      ring.bytes.push(size);
      ring.totalBytes += size;
      this.heldBytes += size;
    }
    this.heldRecords += lines.length;
    this.received += lines.length;
    this.pushes.set("accepted", this.pushes.get("accepted")! + 1);
    const over = ring.lines.length - this.limits.perDataplane;
    if (over > 0) this.evict(ring, over, "ring_full");
    while (this.heldBytes > this.limits.maxBytes) {
      const largest = [...this.rings.values()].reduce((a, b) => (b.totalBytes > a.totalBytes ? b : a));
      let n = 0;
      let freed = 0;
      while (n < largest.lines.length && this.heldBytes - freed > this.limits.maxBytes) freed += largest.bytes[n++]!;
      this.evict(largest, Math.max(n, 1), "memory_limit");
    }
    for (const [k, r] of this.rings) if (r.lines.length === 0) this.rings.delete(k);
  }

  /** The dataplane's held records, oldest first (a copy). */
  lines(mesh: string, name: string): string[] {
    return [...(this.rings.get(keyOf(mesh, name))?.lines ?? [])];
  }

  /** How many records the dataplane has held. */
  held(mesh: string, name: string): number {
    return this.rings.get(keyOf(mesh, name))?.lines.length ?? 0;
  }

  /** Forgets a dataplane's records (it was deleted). */
  remove(mesh: string, name: string): void {
    const key = keyOf(mesh, name);
    const ring = this.rings.get(key);
    if (!ring) return;
    this.evict(ring, ring.lines.length, "dataplane_removed");
    this.rings.delete(key);
  }

  /** Counts a push that was refused; `records` of it, when they could be counted. */
  refused(result: Exclude<PushResult, "accepted">, records = 0): void {
    this.pushes.set(result, this.pushes.get(result)! + 1);
    this.count("refused", records);
  }

  get records(): number {
    return this.heldRecords;
  }

  get bytes(): number {
    return this.heldBytes;
  }

  private evict(ring: Ring, n: number, reason: SampleDropReason): void {
    ring.lines.splice(0, n);
    const freed = ring.bytes.splice(0, n).reduce((a, b) => a + b, 0);
    ring.totalBytes -= freed;
    this.heldBytes -= freed;
    this.heldRecords -= n;
    this.count(reason, n);
  }

  private count(reason: SampleDropReason, n: number): void {
    this.dropped.set(reason, this.dropped.get(reason)! + n);
  }
}

function keyOf(mesh: string, name: string): string {
  return `${mesh}/${name}`;
}
