// The drain state machine SERVING → DRAINING → EXITING → DONE, in three modes: a timed drain (SIGTERM,
// POST /drain), drain-forever (SIGUSR2, a native sidecar's preStop) and quit (a Job's explicit exit).
// Pure: clock, timers and every side effect are injected (step-runner.ts does the bounding and sleeping).
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

// Drain-forever (Kuma PR #9904): steps 1–3 as above, with /drain_listeners?inboundonly&graceful&skip_exit,
// then no deadline: the app keeps being served until kubelet's SIGTERM, which goes straight to step 5.
import { StepRunner } from "./step-runner.js";
import { FORCED_EXIT_CODE, type DrainClock, type DrainEffects, type DrainLog, type DrainMode, type DrainOptions, type DrainPhase, type DrainResult, type DrainSnapshot, type Skipped } from "./types.js";

export { FORCED_EXIT_CODE };

export type { DrainClock, DrainEffects, DrainLog, DrainMode, DrainOptions, DrainPhase, DrainResult, DrainSnapshot } from "./types.js";

export type SignalOutcome = "start" | "forever" | "hurry" | "force" | "ignored";

/** Kuma's drain-forever signal (kuma-dp, PR #9904). */
export const DRAIN_FOREVER_SIGNAL = "SIGUSR2";

const NO_LOG: DrainLog = { info() {}, warn() {} };

export class DrainController {
  private phaseNow: DrainPhase = "serving";
  private modeNow: DrainMode | undefined;
  private signals = 0;
  private sinceMs: number | undefined;
  private deadlineMs: number | undefined;
  private drainedAtMs: number | undefined;
  private inflightAtExit: number | undefined;
  private hurried = false;
  private quitRequested = false;
  private resolveDone!: (r: DrainResult) => void;
  private resolveDrained!: () => void;
  private readonly opts: Required<DrainOptions>;
  private readonly steps: StepRunner;

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
    this.opts = { drainListeners: false, pollIntervalMs: 200, callTimeoutMs: 2000, stopTimeoutMs: 10_000, exitOnSignal: false, ...options };
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.drained = new Promise((resolve) => (this.resolveDrained = resolve));
    this.steps = new StepRunner(clock, log, () => this.isDone(), () => this.elapsedMs());
  }

  get phase(): DrainPhase {
    return this.phaseNow;
  }

  snapshot(): DrainSnapshot {
    return {
      phase: this.phaseNow,
      mode: this.modeNow,
      sinceMs: this.sinceMs,
      deadlineMs: this.deadlineMs,
      drainedAtMs: this.drainedAtMs,
      inflightAtExit: this.inflightAtExit,
    };
  }

  /** Starts the timed drain; idempotent (later calls, of any mode, return the same completion). */
  start(trigger: string): Promise<DrainResult> {
    return this.enter("drain", trigger);
  }

  /**
   * Drain-forever: fail health checks, drain inbound listeners without exiting, tell the control
   * plane, then wait for a signal with no deadline. A no-op once any drain has started.
   */
  drainForever(trigger: string): Promise<DrainResult> {
    return this.enter("forever", trigger);
  }

  /**
   * The explicit exit (a Job's app is done): from serving, skip Envoy's drain and the wait; from a
   * drain, cut it short. Either way Envoy is told to exit too (quitEnvoy), and the process exits 0.
   */
  quit(trigger: string): Promise<DrainResult> {
    this.quitRequested = true;
    if (this.phaseNow === "serving") return this.enter("exit", trigger);
    this.hurry(trigger);
    return this.done;
  }

  /** Cuts the wait short and goes to the exit steps (second signal; any signal while draining forever). */
  hurry(reason: string): void {
    if (this.phaseNow !== "draining" || this.hurried) return;
    this.hurried = true;
    this.deadlineMs = Math.min(this.deadlineMs ?? Infinity, this.clock.now());
    this.log.info({ step: "hurry", reason, afterMs: this.elapsedMs() }, "drain cut short: going to the exit steps");
    this.steps.wakeAll();
  }

  /** Gives up at once (third signal): done resolves with FORCED_EXIT_CODE. */
  force(reason: string): void {
    if (this.phaseNow === "done") return;
    this.phaseNow = "done";
    this.log.warn({ step: "force", reason, afterMs: this.elapsedMs() }, "drain abandoned: exiting now");
    this.resolveDone({ exitCode: FORCED_EXIT_CODE, forced: true });
  }

  /**
   * Signal semantics. SIGUSR2 enters drain-forever (not counted). SIGTERM/SIGINT are counted: the
   * first starts draining (a no-op when POST /drain already did, so a kubelet SIGTERM after a preStop
   * never cuts the drain short) — except while draining forever, where it goes straight to the exit
   * steps; the second goes to the exit steps; the third exits at once. With exitOnSignal the first
   * skips the drain (and Envoy's) and exits at once.
   */
  signal(name: string): SignalOutcome {
    if (name === DRAIN_FOREVER_SIGNAL) {
      const outcome: SignalOutcome = this.phaseNow === "serving" ? "forever" : "ignored";
      this.log.info({ signal: name, outcome, phase: this.phaseNow }, `received ${name}: ${outcome}`);
      if (outcome === "forever") void this.drainForever(name);
      return outcome;
    }
    this.signals += 1;
    const first: SignalOutcome = this.modeNow === "forever" ? "hurry" : "start";
    const outcome: SignalOutcome = this.phaseNow === "done" ? "ignored" : this.signals === 1 ? first : this.signals === 2 ? "hurry" : "force";
    this.log.info({ signal: name, count: this.signals, outcome, phase: this.phaseNow }, `received ${name}: ${outcome}`);
    const reason = `${name} #${this.signals}`;
    if (outcome === "start" && this.opts.exitOnSignal) void this.enter("exit", name);
    else if (outcome === "start") void this.start(name);
    else if (outcome === "hurry") this.hurry(reason);
    else if (outcome === "force") this.force(reason);
    return outcome;
  }

  private enter(mode: DrainMode, trigger: string): Promise<DrainResult> {
    if (this.phaseNow !== "serving") return this.done;
    this.phaseNow = "draining";
    this.modeNow = mode;
    this.sinceMs = this.clock.now();
    this.deadlineMs = mode === "drain" ? this.sinceMs + this.opts.drainTimeMs : mode === "exit" ? this.sinceMs : undefined;
    const fields: Record<string, unknown> = { step: "start", mode, trigger };
    if (mode === "drain") Object.assign(fields, { drainMinMs: this.opts.drainMinMs, drainTimeMs: this.opts.drainTimeMs, deadline: new Date(this.deadlineMs!).toISOString() });
    this.log.info(fields, mode === "forever" ? "drain started: draining forever until SIGTERM" : mode === "exit" ? "exiting now, without a drain" : "drain started");
    if (mode === "exit") this.hurried = true;
    void this.run(mode);
    return this.done;
  }

  private async run(mode: DrainMode): Promise<void> {
    // 1. local state: synchronous, cannot fail
    await this.steps.step("ready_503_health_not_serving", async () => {
      this.effects.setReady(false);
      this.effects.setHealthNotServing();
    });
    // 2. Envoy's own drain; 3. control plane
    await this.drainingStep("envoy_healthcheck_fail", () => this.effects.failEnvoyHealthchecks());
    if (mode === "forever") await this.drainingStep("envoy_drain_listeners_forever", () => this.effects.drainListenersForever());
    else if (this.opts.drainListeners) await this.drainingStep("envoy_drain_listeners", () => this.effects.drainListeners());
    await this.drainingStep("control_plane_draining", () => this.effects.markDraining());
    // 4. wait (forever: until a signal)
    if (mode === "forever") await this.waitForSignal();
    else await this.wait();
    if (this.isDone()) return;
    this.phaseNow = "exiting";
    // 5. deregister
    await this.steps.step("control_plane_deregister", () => this.effects.deregister(), this.opts.callTimeoutMs);
    if (this.isDone()) return;
    this.drainedAtMs = this.clock.now();
    this.resolveDrained();
    // Let /drain?wait=true callers get their answer before the servers close.
    await this.steps.sleep(0);
    // 6. stop Envoy, close servers, exit 0
    if (this.quitRequested) await this.steps.step("quit_envoy", () => this.effects.quitEnvoy(), this.opts.stopTimeoutMs);
    else await this.steps.step("stop_envoy", () => this.effects.stopEnvoy(), this.opts.stopTimeoutMs);
    if (this.isDone()) return;
    await this.steps.step("close_servers", () => this.effects.closeServers(), this.opts.stopTimeoutMs);
    if (this.isDone()) return;
    this.phaseNow = "done";
    this.log.info({ step: "exit", exitCode: 0, afterMs: this.elapsedMs() }, "drain complete");
    this.resolveDone({ exitCode: 0, forced: false });
  }

  /** Drain-forever's wait: no deadline, no polling; only a signal (or quit) ends it. */
  private async waitForSignal(): Promise<void> {
    while (!this.hurried && !this.isDone()) await this.steps.sleepUnlessHurried(Infinity);
    if (this.isDone()) return;
    this.log.info({ step: "wait", reason: "signal", afterMs: this.elapsedMs() }, "drain-forever over: signal");
  }

  /** Waits between drainMinMs and the deadline; leaves early on zero in-flight requests after the minimum. */
  private async wait(): Promise<void> {
    const started = this.clock.now();
    const minUntilMs = this.sinceMs! + this.opts.drainMinMs;
    let reason = "deadline";
    for (;;) {
      if (this.isDone()) return;
      if (this.hurried) {
        reason = this.modeNow === "exit" ? "exit" : "signal";
        break;
      }
      const now = this.clock.now();
      if (now >= this.deadlineMs!) break;
      if (now < minUntilMs) {
        await this.steps.sleepUnlessHurried(Math.min(minUntilMs, this.deadlineMs!) - now);
        continue;
      }
      const read = await this.steps.bounded(() => this.effects.readInflight(), Math.min(this.opts.callTimeoutMs, this.remainingMs()));
      if (read.outcome === "ok" && typeof read.value === "number") {
        this.inflightAtExit = read.value;
        if (read.value === 0) {
          reason = "no requests in flight";
          break;
        }
      }
      const left = this.remainingMs();
      if (left > 0) await this.steps.sleepUnlessHurried(Math.min(this.opts.pollIntervalMs, left));
    }
    if (this.isDone()) return;
    this.log.info(
      { step: "wait", reason, ms: this.clock.now() - started, afterMs: this.elapsedMs(), inflight: this.inflightAtExit ?? null },
      `drain wait over: ${reason}`,
    );
  }

  /** A step before the wait: bounded by the call timeout and the deadline, skipped once hurried. */
  private async drainingStep(name: string, fn: () => Promise<void | Skipped>): Promise<void> {
    if (this.hurried || this.isDone()) {
      this.log.info({ step: name, outcome: "skipped" }, `drain step ${name}: skipped`);
      return;
    }
    await this.steps.step(name, fn, Math.max(0, Math.min(this.opts.callTimeoutMs, this.remainingMs())), true);
  }

  /** ms until the deadline; Infinity while draining forever (no deadline). */
  private remainingMs(): number {
    return this.deadlineMs === undefined ? Infinity : Math.max(0, this.deadlineMs - this.clock.now());
  }

  private elapsedMs(): number | null {
    return this.sinceMs === undefined ? null : this.clock.now() - this.sinceMs;
  }

  private isDone(): boolean {
    return this.phaseNow === "done";
  }
}
