// The drain state machine SERVING → DRAINING → EXITING → DONE. Pure: clock, timers and every side
// effect are injected; it imports nothing from node:, HTTP, gRPC or prom-client.
//
// Why this order (kuma-dp run.go since kumahq/kuma PR #4229, plus the gaps it leaves; docs/drain.md "Why this order"):
//  1. Our own /ready (503), gRPC health (NOT_SERVING) and /drain (draining) flip first and
//     synchronously: they are local, cannot fail, and the wasm filter and health checkers see them at once.
//  2. Envoy `/healthcheck/fail` next: Envoy's drain state is the only thing that makes it send
//     `Connection: close` on HTTP/1 and GOAWAY on HTTP/2 (a filter header alone cannot), so keep-alive
//     clients reconnect elsewhere. Envoy keeps accepting and serving meanwhile: nothing is refused.
//  3. The control plane hears "draining" after Envoy already pushes clients away, so a client that
//     still picks us while endpoints propagate is served, then told to go.
//  4. Wait at least drainMinMs (endpoint removal takes time to reach every client; leaving at the
//     first idle moment would refuse requests still on their way) and at most drainTimeMs (the
//     kubelet's SIGKILL is coming). Leave early on zero in-flight *requests*, not connections: idle
//     keep-alive and scrape connections must not hold the pod.
//  5. Deregister only once nothing is served any more: "draining" stays true while we still serve,
//     and removal is explicit and immediate rather than left to a stream timeout or a 72h GC.
//  6. Envoy gets SIGTERM only now, because on SIGTERM it exits without draining; our servers close
//     last because Envoy's ext_proc filter calls them until Envoy is gone.
// Every step is bounded: the wait never runs past its deadline whatever Envoy or the control plane do.

export type DrainPhase = "serving" | "draining" | "exiting" | "done";

/** What the controller does to the world; each may fail or hang, the controller bounds and logs it. */
export interface DrainEffects {
  /** /ready answers 503 from now on. */
  setReady(ready: false): void;
  /** gRPC health answers NOT_SERVING from now on. */
  setHealthNotServing(): void;
  /** Envoy admin POST /healthcheck/fail. */
  failEnvoyHealthchecks(): Promise<void>;
  /** Envoy admin POST /drain_listeners?graceful&inboundonly (only with the drainListeners option). */
  drainListeners(): Promise<void>;
  /** Control plane: this dataplane is draining. */
  markDraining(): Promise<void>;
  /** Downstream requests active on Envoy's inbound listener; undefined when unknown. */
  readInflight(): Promise<number | undefined>;
  /** Control plane: remove this dataplane. */
  deregister(): Promise<void>;
  /** Stop Envoy if we started it (no-op otherwise); resolves when it has exited. */
  stopEnvoy(): Promise<void>;
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
  /** When draining started (epoch ms), or undefined while serving. */
  sinceMs: number | undefined;
  /** When the wait ends at the latest (epoch ms). */
  deadlineMs: number | undefined;
  /** When the drain finished (after deregistration), epoch ms. */
  drainedAtMs: number | undefined;
  /** Last in-flight reading taken before the exit steps. */
  inflightAtExit: number | undefined;
}

export type SignalOutcome = "start" | "hurry" | "force" | "ignored";

type Outcome = "ok" | "failed" | "timeout" | "cut short";

const NO_LOG: DrainLog = { info() {}, warn() {} };

export class DrainController {
  private phaseNow: DrainPhase = "serving";
  private signals = 0;
  private sinceMs: number | undefined;
  private deadlineMs: number | undefined;
  private drainedAtMs: number | undefined;
  private inflightAtExit: number | undefined;
  private hurried = false;
  private readonly hurryWaiters = new Set<() => void>();
  private resolveDone!: (r: DrainResult) => void;
  private resolveDrained!: () => void;
  private readonly opts: Required<DrainOptions>;

  /** Resolves when the process should exit, with its exit code. */
  readonly done: Promise<DrainResult>;
  /** Resolves once draining is complete (waited, deregistered), before Envoy stops and servers close. */
  readonly drained: Promise<void>;

  constructor(
    private readonly effects: DrainEffects,
    options: DrainOptions,
    private readonly clock: DrainClock,
    private readonly log: DrainLog = NO_LOG,
  ) {
    this.opts = { drainListeners: false, pollIntervalMs: 200, callTimeoutMs: 2000, stopTimeoutMs: 10_000, ...options };
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.drained = new Promise((resolve) => (this.resolveDrained = resolve));
  }

  get phase(): DrainPhase {
    return this.phaseNow;
  }

  snapshot(): DrainSnapshot {
    return {
      phase: this.phaseNow,
      sinceMs: this.sinceMs,
      deadlineMs: this.deadlineMs,
      drainedAtMs: this.drainedAtMs,
      inflightAtExit: this.inflightAtExit,
    };
  }

  /** Starts the drain sequence; idempotent (later calls return the same completion). */
  start(trigger: string): Promise<DrainResult> {
    if (this.phaseNow !== "serving") return this.done;
    this.phaseNow = "draining";
    this.sinceMs = this.clock.now();
    this.deadlineMs = this.sinceMs + this.opts.drainTimeMs;
    this.log.info(
      { step: "start", trigger, drainMinMs: this.opts.drainMinMs, drainTimeMs: this.opts.drainTimeMs, deadline: new Date(this.deadlineMs).toISOString() },
      "drain started",
    );
    void this.run();
    return this.done;
  }

  /** Cuts the wait short and goes to the exit steps (second signal). */
  hurry(reason: string): void {
    if (this.phaseNow !== "draining" || this.hurried) return;
    this.hurried = true;
    this.deadlineMs = Math.min(this.deadlineMs!, this.clock.now());
    this.log.info({ step: "hurry", reason, afterMs: this.elapsedMs() }, "drain cut short: going to the exit steps");
    for (const wake of this.hurryWaiters) wake();
    this.hurryWaiters.clear();
  }

  /** Gives up at once (third signal): done resolves with FORCED_EXIT_CODE. */
  force(reason: string): void {
    if (this.phaseNow === "done") return;
    this.phaseNow = "done";
    this.log.warn({ step: "force", reason, afterMs: this.elapsedMs() }, "drain abandoned: exiting now");
    this.resolveDone({ exitCode: FORCED_EXIT_CODE, forced: true });
  }

  /**
   * SIGTERM/SIGINT semantics, counted per signal: the first starts draining (a no-op when POST /drain
   * already did, so a kubelet SIGTERM after a preStop never cuts the drain short), the second goes
   * straight to the exit steps, the third exits at once.
   */
  signal(name: string): SignalOutcome {
    this.signals += 1;
    const outcome: SignalOutcome = this.phaseNow === "done" ? "ignored" : this.signals === 1 ? "start" : this.signals === 2 ? "hurry" : "force";
    this.log.info({ signal: name, count: this.signals, outcome, phase: this.phaseNow }, `received ${name}: ${outcome}`);
    const reason = `${name} #${this.signals}`;
    if (outcome === "start") void this.start(name);
    else if (outcome === "hurry") this.hurry(reason);
    else if (outcome === "force") this.force(reason);
    return outcome;
  }

  private async run(): Promise<void> {
    // 1. local state: synchronous, cannot fail
    await this.step("ready_503_health_not_serving", async () => {
      this.effects.setReady(false);
      this.effects.setHealthNotServing();
    });
    // 2. Envoy's own drain; 3. control plane
    await this.drainingStep("envoy_healthcheck_fail", () => this.effects.failEnvoyHealthchecks());
    if (this.opts.drainListeners) await this.drainingStep("envoy_drain_listeners", () => this.effects.drainListeners());
    await this.drainingStep("control_plane_draining", () => this.effects.markDraining());
    // 4. wait
    await this.wait();
    if (this.isDone()) return;
    this.phaseNow = "exiting";
    // 5. deregister
    await this.step("control_plane_deregister", () => this.effects.deregister(), this.opts.callTimeoutMs);
    if (this.isDone()) return;
    this.drainedAtMs = this.clock.now();
    this.resolveDrained();
    // Let /drain?wait=true callers get their answer before the servers close.
    await this.sleep(0);
    // 6. stop Envoy, close servers, exit 0
    await this.step("stop_envoy", () => this.effects.stopEnvoy(), this.opts.stopTimeoutMs);
    if (this.isDone()) return;
    await this.step("close_servers", () => this.effects.closeServers(), this.opts.stopTimeoutMs);
    if (this.isDone()) return;
    this.phaseNow = "done";
    this.log.info({ step: "exit", exitCode: 0, afterMs: this.elapsedMs() }, "drain complete");
    this.resolveDone({ exitCode: 0, forced: false });
  }

  /** Waits between drainMinMs and the deadline; leaves early on zero in-flight requests after the minimum. */
  private async wait(): Promise<void> {
    const started = this.clock.now();
    const minUntilMs = this.sinceMs! + this.opts.drainMinMs;
    let reason = "deadline";
    for (;;) {
      if (this.isDone()) return;
      if (this.hurried) {
        reason = "signal";
        break;
      }
      const now = this.clock.now();
      if (now >= this.deadlineMs!) break;
      if (now < minUntilMs) {
        await this.sleepUnlessHurried(Math.min(minUntilMs, this.deadlineMs!) - now);
        continue;
      }
      const read = await this.bounded(() => this.effects.readInflight(), Math.min(this.opts.callTimeoutMs, this.remainingMs()));
      if (read.outcome === "ok" && typeof read.value === "number") {
        this.inflightAtExit = read.value;
        if (read.value === 0) {
          reason = "no requests in flight";
          break;
        }
      }
      const left = this.remainingMs();
      if (left > 0) await this.sleepUnlessHurried(Math.min(this.opts.pollIntervalMs, left));
    }
    if (this.isDone()) return;
    this.log.info(
      { step: "wait", reason, ms: this.clock.now() - started, afterMs: this.elapsedMs(), inflight: this.inflightAtExit ?? null },
      `drain wait over: ${reason}`,
    );
  }

  /** A step before the wait: bounded by the call timeout and the deadline, skipped once hurried. */
  private async drainingStep(name: string, fn: () => Promise<void>): Promise<void> {
    if (this.hurried || this.isDone()) {
      this.log.info({ step: name, outcome: "skipped" }, `drain step ${name}: skipped`);
      return;
    }
    await this.step(name, fn, Math.max(0, Math.min(this.opts.callTimeoutMs, this.remainingMs())), true);
  }

  private async step(name: string, fn: () => Promise<void>, timeoutMs?: number, cutByHurry = false): Promise<void> {
    const t0 = this.clock.now();
    const r = await this.bounded(fn, timeoutMs, cutByHurry);
    if (this.isDone()) return;
    const fields: Record<string, unknown> = { step: name, outcome: r.outcome, ms: this.clock.now() - t0, afterMs: this.elapsedMs() };
    if (r.error !== undefined) fields.err = r.error instanceof Error ? r.error.message : String(r.error);
    if (r.outcome === "ok") this.log.info(fields, `drain step ${name}: ok`);
    else this.log.warn(fields, `drain step ${name}: ${r.outcome}`);
  }

  /** Runs fn, giving up after timeoutMs (if given) or on hurry (if asked); never throws. */
  private bounded<T>(fn: () => Promise<T>, timeoutMs?: number, cutByHurry = false): Promise<{ outcome: Outcome; value?: T; error?: unknown }> {
    return new Promise((resolve) => {
      let settled = false;
      let timer: unknown;
      const finish = (r: { outcome: Outcome; value?: T; error?: unknown }) => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) this.clock.clearTimeout(timer);
        this.hurryWaiters.delete(onHurry);
        resolve(r);
      };
      const onHurry = () => finish({ outcome: "cut short" });
      if (timeoutMs !== undefined) timer = this.clock.setTimeout(() => finish({ outcome: "timeout" }), timeoutMs);
      if (cutByHurry) this.hurryWaiters.add(onHurry);
      let p: Promise<T>;
      try {
        p = Promise.resolve(fn());
      } catch (error) {
        finish({ outcome: "failed", error });
        return;
      }
      p.then(
        (value) => finish({ outcome: "ok", value }),
        (error: unknown) => finish({ outcome: "failed", error }),
      );
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.clock.setTimeout(resolve, ms));
  }

  private sleepUnlessHurried(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.clock.clearTimeout(timer);
        this.hurryWaiters.delete(wake);
        resolve();
      };
      const timer = this.clock.setTimeout(wake, ms);
      this.hurryWaiters.add(wake);
    });
  }

  private remainingMs(): number {
    return Math.max(0, this.deadlineMs! - this.clock.now());
  }

  private elapsedMs(): number | null {
    return this.sinceMs === undefined ? null : this.clock.now() - this.sinceMs;
  }

  private isDone(): boolean {
    return this.phaseNow === "done";
  }
}
