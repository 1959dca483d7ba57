// Runs a real Prometheus (Debian package) in a temp dir on a free loopback port, with a scrape config derived
// from the repo's envoy/prometheus.yml, and queries it through its HTTP API.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";

export interface Sample {
  metric: Record<string, string>;
  value: number;
}

/** A free TCP port on 127.0.0.1 (bound, read, released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * The repo's scrape config with each kept job pointed at a new target and every interval at `intervalS`.
 * Jobs not in `targets` are dropped (nothing to scrape for them here); `ruleFiles` (absolute paths) replace rule_files.
 */
export function scrapeConfigFor(
  repoConfig: { global?: Record<string, unknown>; scrape_configs: Array<Record<string, unknown>>; rule_files?: string[] },
  targets: Record<string, string | string[]>,
  intervalS = 1,
  ruleFiles: string[] = [],
): string {
  const interval = `${intervalS}s`;
  const jobs = repoConfig.scrape_configs
    .filter((job) => String(job.job_name) in targets)
    .map((job) => ({ ...job, scrape_interval: interval, static_configs: [{ targets: [targets[String(job.job_name)]!].flat() }] }));
  // The repo's rule_files are relative to envoy/; the config is written elsewhere, so callers pass absolute paths.
  return stringify({ ...repoConfig, rule_files: ruleFiles, global: { ...repoConfig.global, scrape_interval: interval, evaluation_interval: interval }, scrape_configs: jobs });
}

export interface RuleState {
  name: string;
  query: string;
  health: string;
  lastError?: string;
  lastEvaluation: string;
}

export class RunningPrometheus {
  private output = "";

  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
    private readonly dir: string,
  ) {
    child.stdout?.setEncoding("utf8").on("data", (c: string) => (this.output += c));
    child.stderr?.setEncoding("utf8").on("data", (c: string) => (this.output += c));
  }

  /** Starts `binary` with `configText`; resolves once /-/ready answers 200. */
  static async start(binary: string, configText: string, timeoutMs = 30_000): Promise<RunningPrometheus> {
    const dir = mkdtempSync(join(tmpdir(), "meshext-prometheus-"));
    const configFile = join(dir, "prometheus.yml");
    writeFileSync(configFile, configText);
    const port = await freePort();
    const child = spawn(binary, [`--config.file=${configFile}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const running = new RunningPrometheus(`http://127.0.0.1:${port}`, child, dir);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}): ${running.output}`);
      const ready = await fetch(`${running.url}/-/ready`).then((r) => r.status === 200, () => false);
      if (ready) return running;
      await new Promise((r) => setTimeout(r, 200));
    }
    await running.stop();
    throw new Error(`prometheus not ready within ${timeoutMs}ms: ${running.output}`);
  }

  /** Instant query through /api/v1/query; throws on an API error. */
  async query(expr: string): Promise<Sample[]> {
    const res = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
    if (body.status !== "success") throw new Error(`query ${expr}: ${body.error}`);
    return (body.data?.result ?? []).map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  }

  /** The loaded alerting and recording rules with their evaluation health, through /api/v1/rules. */
  async rules(): Promise<RuleState[]> {
    const body = (await (await fetch(`${this.url}/api/v1/rules`)).json()) as { data: { groups: Array<{ rules: RuleState[] }> } };
    return body.data.groups.flatMap((g) => g.rules);
  }

  /** Polls `expr` until `accept` holds for its result (or the time is up: returns the last result). */
  async until(expr: string, accept: (samples: Sample[]) => boolean, timeoutMs = 30_000): Promise<Sample[]> {
    const deadline = Date.now() + timeoutMs;
    let last: Sample[] = [];
    while (Date.now() < deadline) {
      last = await this.query(expr);
      if (accept(last)) return last;
      await new Promise((r) => setTimeout(r, 500));
    }
    return last;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((r) => this.child.once("exit", r));
      this.child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
