// Validation results of a control-plane set's items by their text (volatile fields left out), kept from one sync
// to the next: an unchanged item reuses its result, so a change of one policy validates that one policy.
import type { KumaVersion } from "../policy/model/kuma-version.js";
import type { Policy, Violation } from "../policy/documents/parse.js";
import type { Resource as EngineResource } from "../policy/documents/resources.js";

export type ItemOutcome = { policy: Policy } | { resource: EngineResource } | { violations: Violation[] };

export class ValidationMemo {
  private last = new Map<string, ItemOutcome>();
  private next = new Map<string, ItemOutcome>();
  private kumaVersion: KumaVersion | undefined;
  /** Items validated in the last round, and items that reused an earlier result (for tests and metrics). */
  validated = 0;
  reused = 0;

  /** Starts a round under `kumaVersion`: a version other than the last round's forgets every result. */
  begin(kumaVersion: KumaVersion | undefined): void {
    if (kumaVersion !== this.kumaVersion) this.last.clear();
    this.kumaVersion = kumaVersion;
    this.next = new Map();
    this.validated = 0;
    this.reused = 0;
  }

  /** What this round or the last one found for `text`, if anything (kept again with `keep(…, true)`). */
  known(text: string): ItemOutcome | undefined {
    return this.next.get(text) ?? this.last.get(text);
  }

  /** Keeps `outcome` for `text` for the next round; `reused`: it came from known(), else it was validated now. */
  keep(text: string, outcome: ItemOutcome, reused: boolean): void {
    if (reused) this.reused++;
    else this.validated++;
    this.next.set(text, outcome);
  }

  /** Ends the round: only what it saw is kept, so the memo holds at most one set's items. */
  end(): void {
    this.last = this.next;
    this.next = new Map();
  }
}
