// A real Envoy process for tests: finds the binary (MESHEXT_ENVOY, the pinned install, PATH), starts it on a
// bootstrap with ephemeral ports, waits until its admin says LIVE, and reads its listeners and stats.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExecutionContext } from "ava";
import { stringify } from "yaml";
import { envoyVersionOf, HOW_TO_GET_ENVOY, locateEnvoy } from "../../extproc/envoy-binary.js";

export interface FoundEnvoy {
  path: string;
  version: string;
}

let found: FoundEnvoy | string | undefined;

/** The Envoy the tests run, or why there is none. Looked up once per test process. */
export function envoyForTests(): FoundEnvoy | string {
  if (found !== undefined) return found;
  const location = locateEnvoy(process.env);
  if ("error" in location) return (found = location.error);
  const version = envoyVersionOf(location.path);
  return (found = version ? { path: location.path, version } : `${location.path} --version did not report an Envoy version: ${HOW_TO_GET_ENVOY}`);
}

/**
 * The Envoy for a real-Envoy test, or undefined after logging why the test skips. In CI (CI=true) a missing Envoy
 * fails the test instead: CI installs it (scripts/install-envoy.sh from `npm test`'s pretest), so none may skip there.
 */
export function requireEnvoy(t: ExecutionContext): FoundEnvoy | undefined {
  const envoy = envoyForTests();
  if (typeof envoy !== "string") return envoy;
  if (process.env.CI === "true") {
    t.fail(`no Envoy in CI: ${envoy}`);
  } else {
    t.log(`skipped: ${envoy}`);
    t.pass();
  }
  return undefined;
}

/** `envoy --mode validate` on a bootstrap file: ok, and Envoy's own words when not. */
export function validateBootstrap(envoy: FoundEnvoy, file: string, cwd?: string): { ok: boolean; output: string } {
  const run = spawnSync(envoy.path, ["--mode", "validate", "-c", file, "--log-level", "critical", "--disable-hot-restart"], { cwd, encoding: "utf8", timeout: 60_000 });
  return { ok: run.status === 0, output: (run.stdout ?? "") + (run.stderr ?? "") };
}

export interface RealEnvoy {
  adminUrl: string;
  process: ChildProcess;
  /** Everything Envoy wrote to stdout and stderr so far. */
  output(): string;
  /** The port a listener (by name) is bound to. */
  listenerPort(name: string): Promise<number>;
  /** GET /stats as a name → value map (counters and gauges). */
  stats(filter?: string): Promise<Map<string, number>>;
  /** GET /stats/prometheus as text. */
  prometheus(): Promise<string>;
  /** Resolves with Envoy's exit once it has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

export interface StartEnvoyOptions {
  cwd?: string;
  logLevel?: string;
  /** How long to wait for LIVE, ms. */
  readyTimeoutMs?: number;
  /** More Envoy arguments. */
  args?: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts Envoy on `bootstrap` (an object, rendered to YAML, or YAML text) and waits for its admin's /ready to answer
 * 200. Give the admin `port_value: 0`: its address comes from --admin-address-path. Rejects with Envoy's output
 * when it exits or is not LIVE in time.
 */
export async function startEnvoy(envoy: FoundEnvoy, bootstrap: object | string, opts: StartEnvoyOptions = {}): Promise<RealEnvoy> {
  const dir = mkdtempSync(join(tmpdir(), "meshext-envoy-"));
  const configPath = join(dir, "envoy.yaml");
  const adminPath = join(dir, "admin-address");
  writeFileSync(configPath, typeof bootstrap === "string" ? bootstrap : stringify(bootstrap));
  const child = spawn(
    envoy.path,
    ["-c", configPath, "--admin-address-path", adminPath, "--disable-hot-restart", "--log-level", opts.logLevel ?? "warning", "--concurrency", "1", ...(opts.args ?? [])],
    { cwd: opts.cwd, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  let done = false;
  void exited.then(() => (done = true));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 20_000);
  let adminUrl = "";
  while (!done && Date.now() < deadline) {
    try {
      if (!adminUrl) adminUrl = `http://${readFileSync(adminPath, "utf8").trim()}`;
      const ready = await fetch(`${adminUrl}/ready`);
      await ready.text();
      if (ready.status === 200) break;
    } catch {
      // not up yet
    }
    await sleep(25);
  }
  const stop = async () => {
    if (!done) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(killer);
    }
    cleanup();
  };
  if (done || Date.now() >= deadline) {
    await stop();
    throw new Error(`envoy did not become LIVE (${done ? "it exited" : "timed out"}):\n${output.slice(-4000)}`);
  }
  const get = async (path: string) => {
    const res = await fetch(adminUrl + path);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`envoy admin ${path}: ${res.status} ${text}`);
    return text;
  };
  return {
    adminUrl,
    process: child,
    output: () => output,
    exited,
    stop,
    prometheus: () => get("/stats/prometheus"),
    async listenerPort(name) {
      const listeners = JSON.parse(await get("/listeners?format=json")).listener_statuses as { name: string; local_address: { socket_address: { port_value: number } } }[];
      const l = listeners.find((x) => x.name === name);
      if (!l) throw new Error(`envoy has no listener ${name}: ${listeners.map((x) => x.name).join(", ")}`);
      return l.local_address.socket_address.port_value;
    },
    async stats(filter) {
      const text = await get(`/stats${filter ? `?filter=${encodeURIComponent(filter)}` : ""}`);
      const out = new Map<string, number>();
      for (const line of text.split("\n")) {
        const m = /^([^:]+): (\d+)$/.exec(line);
        if (m) out.set(m[1]!, Number(m[2]));
      }
      return out;
    },
  };
}
