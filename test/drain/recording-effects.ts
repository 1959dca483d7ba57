// DrainEffects for the pure state-machine tests: records each call with the fake time, and lets a
// test make any call hang, fail or answer late, or set the in-flight count Envoy would report.
import type { DrainEffects } from "../../extproc/drain/controller.js";
import type { FakeClock } from "./fake-clock.js";

export type EffectName = keyof DrainEffects;

export class RecordingEffects {
  readonly calls: { name: EffectName; atMs: number }[] = [];
  /** What readInflight() answers. */
  inflight: number | undefined = 0;
  readonly hang = new Set<EffectName>();
  readonly fail = new Set<EffectName>();
  /** Calls that answer only after this many fake-clock ms. */
  readonly delayMs = new Map<EffectName, number>();
  readonly effects: DrainEffects;

  constructor(private readonly clock: FakeClock) {
    const call = <T>(name: EffectName, value: T) => {
      this.calls.push({ name, atMs: this.clock.now() - START_MS });
      if (this.hang.has(name)) return new Promise<T>(() => {});
      if (this.fail.has(name)) return Promise.reject(new Error(`${name} failed`));
      const delayMs = this.delayMs.get(name);
      if (delayMs !== undefined) return new Promise<T>((resolve) => this.clock.setTimeout(() => resolve(value), delayMs));
      return Promise.resolve(value);
    };
    this.effects = {
      setReady: () => void call("setReady", undefined),
      setHealthNotServing: () => void call("setHealthNotServing", undefined),
      failEnvoyHealthchecks: () => call("failEnvoyHealthchecks", undefined),
      drainListeners: () => call("drainListeners", undefined),
      drainListenersForever: () => call("drainListenersForever", undefined),
      markDraining: () => call("markDraining", undefined),
      readInflight: () => call("readInflight", this.inflight),
      deregister: () => call("deregister", undefined),
      stopEnvoy: () => call("stopEnvoy", undefined),
      quitEnvoy: () => call("quitEnvoy", undefined),
      closeServers: () => call("closeServers", undefined),
    };
  }

  names(opts: { withPolls?: boolean } = {}): EffectName[] {
    return this.calls.filter((c) => opts.withPolls || c.name !== "readInflight").map((c) => c.name);
  }

  /** Fake-clock ms since the drain started (FakeClock starts at START_MS) of the first call. */
  at(name: EffectName): number | undefined {
    return this.calls.find((c) => c.name === name)?.atMs;
  }

  count(name: EffectName): number {
    return this.calls.filter((c) => c.name === name).length;
  }
}

/** FakeClock's initial time; tests start the drain at it. */
export const START_MS = 1_000_000;
