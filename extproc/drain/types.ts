// The drain state machine's vocabulary: phases, modes, the effects it drives, its options and results.

export type DrainPhase = "serving" | "draining" | "exiting" | "done";

/** `drain`: timed (min..max); `forever`: until a signal; `exit`: no Envoy drain, no wait (quit, or --exit-on-sigterm). */
export type DrainMode = "drain" | "forever" | "exit";

/** What an effect resolves to when it had nothing to act on (no Envoy admin, no control plane, no Envoy of ours). */
export interface Skipped {
  skipped: string;
}

/** The drain log then says `skipped` with this reason, never `ok`. */
export const skipped = (reason: string): Skipped => ({ skipped: reason });

export const isSkipped = (value: unknown): value is Skipped => typeof value === "object" && value !== null && typeof (value as Skipped).skipped === "string";

/** What the controller does to the world; each may fail or hang, the controller bounds and logs it. */
export interface DrainEffects {
  /** /ready answers 503 from now on. */
  setReady(ready: false): void;
  /** gRPC health answers NOT_SERVING from now on. */
  setHealthNotServing(): void;
  /** Envoy admin POST /healthcheck/fail. */
  failEnvoyHealthchecks(): Promise<void | Skipped>;
  /** Envoy admin POST /drain_listeners?graceful&inboundonly (only with the drainListeners option). */
  drainListeners(): Promise<void | Skipped>;
  /** Envoy admin POST /drain_listeners?inboundonly&graceful&skip_exit (drain-forever). */
  drainListenersForever(): Promise<void | Skipped>;
  /** Control plane: this dataplane is draining. */
  markDraining(): Promise<void | Skipped>;
  /** Downstream requests active on Envoy's inbound listener; undefined when unknown. */
  readInflight(): Promise<number | undefined>;
  /** Control plane: remove this dataplane. */
  deregister(): Promise<void | Skipped>;
  /** Stop Envoy if we started it (no-op otherwise); resolves when it has exited. */
  stopEnvoy(): Promise<void | Skipped>;
  /** Quit mode: stop Envoy if ours, else ask it to exit (admin /quitquitquit), so a Job's pod completes. */
  quitEnvoy(): Promise<void | Skipped>;
  /** Close our own servers (gRPC, admin). */
  closeServers(): Promise<void>;
}

export interface DrainClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface DrainLog {
  info(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
}

export interface DrainOptions {
  /** Minimum time to stay draining, ms. */
  drainMinMs: number;
  /** Maximum time to stay draining (the deadline), ms. */
  drainTimeMs: number;
  /** Also call Envoy's /drain_listeners. @default false */
  drainListeners?: boolean;
  /** Interval between in-flight reads once the minimum has passed, ms. @default 200 */
  pollIntervalMs?: number;
  /** Bound on each Envoy / control-plane call, ms (also clipped to the deadline while draining). @default 2000 */
  callTimeoutMs?: number;
  /** Bound on stopping Envoy and on closing our servers, ms. @default 10000 */
  stopTimeoutMs?: number;
  /** A first SIGTERM/SIGINT exits at once instead of draining (native sidecars: kubelet signals them after the app exited). @default false */
  exitOnSignal?: boolean;
}

/** Exit code after a third signal: drain abandoned (as kuma-dp's os.Exit(1)). */
export const FORCED_EXIT_CODE = 1;

export interface DrainResult {
  exitCode: number;
  /** True when a third signal cut everything short. */
  forced: boolean;
}

export interface DrainSnapshot {
  phase: DrainPhase;
  /** How the drain was entered, or undefined while serving. */
  mode: DrainMode | undefined;
  /** When draining started (epoch ms), or undefined while serving. */
  sinceMs: number | undefined;
  /** When the wait ends at the latest (epoch ms); undefined while serving and while draining forever. */
  deadlineMs: number | undefined;
  /** When the drain finished (after deregistration), epoch ms. */
  drainedAtMs: number | undefined;
  /** Last in-flight reading taken before the exit steps. */
  inflightAtExit: number | undefined;
}

