// Envoy as a child process, the kuma-dp way: its own process group (a terminal's Ctrl-C or a signal
// to our group does not reach it), SIGTERM only when we say so, SIGKILL after a grace period.
import { spawn, type ChildProcess } from "node:child_process";
import { constants } from "node:os";

export interface EnvoyExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface EnvoyChildOptions {
  /** Time between SIGTERM and SIGKILL in stop(), ms. */
  killGraceMs: number;
  log?: { debug(fields: object, msg: string): void; info(fields: object, msg: string): void; warn(fields: object, msg: string): void };
}

export class EnvoyChild {
  /** Resolves when Envoy has exited, for whatever reason. */
  readonly exited: Promise<EnvoyExit>;
  private exitInfo: EnvoyExit | undefined;
  private stopping: Promise<EnvoyExit> | undefined;

  private constructor(
    private readonly child: ChildProcess,
    private readonly opts: EnvoyChildOptions,
  ) {
    this.exited = new Promise((resolve) => {
      child.on("error", (err) => {
        opts.log?.warn({ err: err.message }, "envoy: process error");
        // Spawning failed (e.g. ENOENT): there will be no 'exit' event.
        if (child.pid === undefined && this.exitInfo === undefined) {
          this.exitInfo = { code: 127, signal: null };
          resolve(this.exitInfo);
        }
      });
      child.once("exit", (code, signal) => {
        this.exitInfo = { code, signal };
        opts.log?.info({ code, signal, pid: child.pid }, "envoy exited");
        resolve(this.exitInfo);
      });
    });
  }

  /** Starts `argv[0] argv[1..]` with inherited stdio, detached into its own process group. */
  static start(argv: readonly string[], opts: EnvoyChildOptions): EnvoyChild {
    const [command, ...args] = argv;
    if (!command) throw new Error("no Envoy command given");
    const child = spawn(command, args, { stdio: "inherit", detached: true });
    // "envoy started" is logged by whoever knows when it is LIVE (envoy-run/launch.ts).
    opts.log?.debug({ pid: child.pid, command: argv.join(" ") }, "envoy spawned");
    return new EnvoyChild(child, opts);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  /** SIGTERM, then SIGKILL after killGraceMs; resolves when Envoy has exited. Idempotent. */
  stop(): Promise<EnvoyExit> {
    if (!this.running) return this.exited;
    this.stopping ??= (async () => {
      this.child.kill("SIGTERM");
      const timer = setTimeout(() => {
        this.opts.log?.warn({ pid: this.child.pid, killGraceMs: this.opts.killGraceMs }, "envoy still running after SIGTERM: SIGKILL");
        this.child.kill("SIGKILL");
      }, this.opts.killGraceMs);
      try {
        return await this.exited;
      } finally {
        clearTimeout(timer);
      }
    })();
    return this.stopping;
  }

  /** SIGKILL now (we are exiting without a drain); synchronous so it works in an 'exit' handler. */
  killNow(): void {
    if (this.running) this.child.kill("SIGKILL");
  }
}

/** Shell-style exit status of Envoy: its code, or 128 + signal number. */
export function exitStatusOf(exit: EnvoyExit): number {
  if (exit.code !== null) return exit.code;
  const signum = exit.signal ? constants.signals[exit.signal] : undefined;
  return signum === undefined ? 1 : 128 + signum;
}
