// Readiness as a set of named gates ("policies", "draining", …): ready only when every gate is
// open. Drives both the admin /ready endpoint and gRPC health, so the two never disagree.

export class Readiness {
  private readonly closed = new Map<string, string>();
  private readonly listeners: Array<(ready: boolean) => void> = [];

  /** Closes gate `name` with a reason (not ready), or opens it (reason undefined). */
  set(name: string, reasonNotReady: string | undefined): void {
    const before = this.ready;
    if (reasonNotReady === undefined) this.closed.delete(name);
    else this.closed.set(name, reasonNotReady);
    if (before !== this.ready) for (const l of this.listeners) l(this.ready);
  }

  get ready(): boolean {
    return this.closed.size === 0;
  }

  /** Why not ready, gate by gate. */
  reasons(): Record<string, string> {
    return Object.fromEntries(this.closed);
  }

  onChange(listener: (ready: boolean) => void): void {
    this.listeners.push(listener);
  }
}
