// Test helpers for the control plane: temp data dirs, a server on 127.0.0.1:0, JSON requests, sample policies.
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "../../extproc/log.js";
import { type ControlPlaneOptions, type RunningControlPlane, startControlPlane } from "../../extproc/control-plane/server.js";

export async function tempDir(prefix = "meshext-cp-"): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

export async function startTestControlPlane(dataDir: string, opts: Partial<ControlPlaneOptions> = {}): Promise<RunningControlPlane> {
  return startControlPlane({ listen: "127.0.0.1:0", dataDir, ...opts }, silentLogger());
}

export interface JsonReply {
  status: number;
  headers: Headers;
  body: any;
}

export async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonReply> {
  const res = await fetch(base + path, {
    method,
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === "string" || Buffer.isBuffer(body) ? (body as string) : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** A valid MeshTrafficPermission: everyone in the mesh gets `action` towards every service. */
export function mtp(name: string, action: "Allow" | "Deny" = "Allow", mesh = "default") {
  return {
    type: "MeshTrafficPermission",
    mesh,
    name,
    spec: { targetRef: { kind: "Mesh" }, from: [{ targetRef: { kind: "Mesh" }, default: { action } }] },
  };
}

/** A Dataplane resource in Kuma's universal shape. */
export function dataplane(name: string, service = "backend", mesh = "default") {
  return {
    type: "Dataplane",
    mesh,
    name,
    networking: { address: "10.0.0.1", inbound: [{ port: 8080, tags: { "kuma.io/service": service } }] },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns true or the time runs out. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 20_000, stepMs = 25): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(stepMs);
  }
  return check();
}

/** A ContainerPatch in Kuma's universal REST form (global: no mesh); values in Kuma's JSON-string style. */
export function containerPatch(name: string, spec: Record<string, unknown> = { sidecarPatch: [{ op: "add", path: "/securityContext/privileged", value: "true" }] }) {
  return { type: "ContainerPatch", name, spec };
}

type Teardown = { teardown(fn: () => Promise<void> | void): void };

/** A control plane on a fresh temp dir, stopped and removed when the test ends. */
export async function controlPlaneFor(t: Teardown, opts: Partial<ControlPlaneOptions> = {}) {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path, opts);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  return { cp, dir };
}

export interface UpProcess {
  /** Resolves to the exit code. */
  exited: Promise<number | null>;
  /** What it printed on stderr so far (the banner). */
  banner(): string;
  kill(signal: NodeJS.Signals): void;
}

/**
 * `meshext up` as a child process on free ports with a fresh data dir; SIGKILLed and cleaned up when the test ends.
 * The sidecar alone (--envoy off) unless `upArgs`/`sidecarArgs` say otherwise: test/envoy-real/up.test.ts runs the data plane.
 */
export async function startUp(t: Teardown, upArgs: string[] = ["--envoy", "off"], sidecarArgs: string[] = []): Promise<UpProcess & { stdout(): string }> {
  const cli = fileURLToPath(new URL("../../extproc/cli.js", import.meta.url));
  const dir = await tempDir();
  const child = spawn(
    process.execPath,
    [cli, "up", "--listen", "127.0.0.1:0", "--data-dir", join(dir.path, "cp"), ...upArgs, "--", "--grpc-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--drain-min", "0", "--drain-time", "200", ...sidecarArgs],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  let banner = "";
  child.stderr.on("data", (c: Buffer) => (banner += c.toString()));
  t.teardown(async () => {
    child.kill("SIGKILL");
    await exited;
    await dir.remove();
  });
  return { exited, banner: () => banner, stdout: () => stdout, kill: (signal) => child.kill(signal) };
}
