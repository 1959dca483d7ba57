// Timing for the control-plane client: poll intervals with jitter (so a fleet does not poll in lockstep)
// and capped exponential backoff with full jitter after failures.

/** baseMs ± fraction·baseMs, uniformly. */
export function withJitter(baseMs: number, fraction = 0.2, random: () => number = Math.random): number {
  return Math.max(0, Math.round(baseMs * (1 - fraction + 2 * fraction * random())));
}

export interface BackoffOptions {
  /** @default 500 */
  initialMs: number;
  /** @default 30000 */
  maxMs: number;
  /** @default 2 */
  factor: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 30_000, factor: 2 };

export class Backoff {
  private failures = 0;

  constructor(
    private readonly opts: BackoffOptions = DEFAULT_BACKOFF,
    private readonly random: () => number = Math.random,
  ) {}

  /** Delay before the next retry: between initialMs/2 and the capped exponential ceiling. */
  next(): number {
    const ceilingMs = Math.min(this.opts.maxMs, this.opts.initialMs * this.opts.factor ** this.failures);
    this.failures++;
    return Math.round(ceilingMs / 2 + (ceilingMs / 2) * this.random());
  }

  reset(): void {
    this.failures = 0;
  }

  get attempts(): number {
    return this.failures;
  }
}

/** Retry-After in ms (seconds or an HTTP date), when present and sane. */
export function retryAfterMs(header: string | null, nowMs = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, 300_000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - nowMs), 300_000);
}
