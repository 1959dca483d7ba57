// The scale-down scenario shared by test/envoy-real/scale-down.test.ts and bench/drain-before-after.ts: two
// instances in a real embedded control plane, the endpoint-following load over both, then one instance leaves
// by a given sequence while the load goes on; returns what every request, connection and process did.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { startControlPlane } from "../../extproc/control-plane/server.js";
import { silentLogger } from "../../extproc/log.js";
import { mtp, tempDir } from "../control-plane/helpers.js";
import { failed, startEndpointLoad, type ConnectionRecord, type EndpointLoad, type RequestRecord } from "./endpoint-load.js";
import { firstStatus, startInstance, unlist, type Instance, type InstanceOptions } from "./mesh-instance.js";
import type { FoundEnvoy } from "./real-envoy.js";

const CLI = join(process.cwd(), "dist", "extproc", "cli.js");

/**
 * How the leaving instance is stopped. classic: SIGTERM to meshext. native: `meshext drain --forever`, then, once
 * nothing is in flight to it, its app exits and meshext (with --exit-on-sigterm) gets SIGTERM. second-sigterm:
 * SIGTERM, then a second one once nothing is in flight (before --drain-min). envoy-sigterm: Envoy alone, SIGTERM.
 * envoy-drain-listeners: Envoy alone, POST /drain_listeners?graceful, SIGTERM after its --drain-time-s.
 * The two Envoy-alone sequences are unlisted from the control plane at the signal (the pod's deletion).
 */
export type LeaveSequence = "classic" | "native" | "second-sigterm" | "envoy-sigterm" | "envoy-drain-listeners";

export interface ScaleDownOptions {
  envoy: FoundEnvoy;
  sequence: LeaveSequence;
  /** Load before the signal, after every connection served a first 200. */
  loadBeforeMs?: number;
  /** Load after the leaving instance exited. */
  loadAfterMs?: number;
  drainMinMs?: number;
  drainTimeMs?: number;
  /** Envoy's --drain-time-s for envoy-drain-listeners. */
  envoyDrainTimeS?: number;
  /** Self-checks: changes to the leaving meshext instance (filters removed, no Envoy admin…). */
  leaving?: Partial<InstanceOptions>;
  log?: (msg: string) => void;
}

export interface ScaleDownResult {
  requests: RequestRecord[];
  failedRequests: RequestRecord[];
  connections: ConnectionRecord[];
  leavingName: string;
  stayingName: string;
  signalAtMs: number;
  /** First 503 from the leaving Envoy's admin /ready, ms after the signal (undefined: none seen). */
  readyFailedAfterMs?: number;
  /** native: when `meshext drain --forever` exited, ms after the signal, and the SIGTERM that followed. */
  drainCommandExitedAfterMs?: number;
  sigtermAfterMs?: number;
  exit: { code: number | null; signal: NodeJS.Signals | null; afterMs: number };
  /** When the control plane stopped listing the leaving instance as online, ms after the signal. */
  unlistedAfterMs?: number;
  lines: Record<string, unknown>[];
  output: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await sleep(10);
  }
}

export async function runScaleDown(o: ScaleDownOptions): Promise<ScaleDownResult> {
  const log = o.log ?? (() => {});
  const dir = await tempDir();
  const cp = await startControlPlane({ listen: "127.0.0.1:0", dataDir: dir.path }, silentLogger());
  const instances: Instance[] = [];
  let load: EndpointLoad | undefined;
  try {
    // Given a mesh whose policy lets everyone call backend, and two instances of backend in it
    const put = await fetch(`${cp.url}/meshes/default/meshtrafficpermissions/allow-all`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(mtp("allow-all")) });
    if (put.status >= 300) throw new Error(`PUT allow-all: ${put.status} ${await put.text()}`);
    const alone = o.sequence === "envoy-sigterm" || o.sequence === "envoy-drain-listeners";
    const drainMinMs = o.drainMinMs ?? (o.sequence === "second-sigterm" ? 15_000 : 3000);
    const drainTimeMs = o.drainTimeMs ?? 20_000;
    const common = { controlPlane: cp.url, envoy: o.envoy, kind: alone ? "envoy-alone" : "meshext", drainMinMs, drainTimeMs } as const;
    const leavingOpts: InstanceOptions = { ...common, name: "backend-a", exitOnSigterm: o.sequence === "native", envoyDrainTimeS: o.envoyDrainTimeS, ...o.leaving };
    log("starting two instances");
    instances.push(...(await Promise.all([startInstance(leavingOpts), startInstance({ ...common, name: "backend-b" })])));
    await Promise.all(instances.map((i) => i.ready));
    const [leaving, staying] = instances as [Instance, Instance];

    // And the load spread over what the control plane reports online
    load = startEndpointLoad({ controlPlane: cp.url, h1Connections: 4, h1LongConnections: 4, h2: true, intervalMs: 50, longDelayMs: 2000, endpointPollMs: 100, h2Prefer: leaving.name });
    const warm = load.warmedUp;
    await Promise.race([warm, sleep(20_000).then(() => Promise.reject(new Error("the load did not warm up in 20 s")))]);
    await sleep(o.loadBeforeMs ?? 2500);

    // When the leaving instance is told to go
    log(`leaving by ${o.sequence}`);
    const ready = firstStatus(`${leaving.envoyAdminUrl}/ready`, 503);
    await sleep(20); // the poller's first round trip is on its way
    const signalAtMs = Date.now();
    let drainCommandExitedAfterMs: number | undefined;
    let sigtermAfterMs: number | undefined;
    const exitDeadlineMs = drainTimeMs + 15_000;
    const quiet = () => load!.inFlight(leaving.name) === 0 && load!.leftAtMs.has(leaving.name);
    switch (o.sequence) {
      case "classic":
        leaving.process.kill("SIGTERM");
        break;
      case "second-sigterm":
        leaving.process.kill("SIGTERM");
        await until(quiet, exitDeadlineMs, "nothing in flight to the draining instance");
        await sleep(200);
        sigtermAfterMs = Date.now() - signalAtMs;
        leaving.process.kill("SIGTERM");
        break;
      case "native": {
        // The preStop hook: `meshext drain --forever` against the sidecar's admin.
        const hook = spawn(process.execPath, [CLI, "drain", "--forever", "--admin", leaving.sidecarAdminUrl], { stdio: "ignore" });
        const code = await new Promise<number | null>((r) => hook.once("exit", (c) => r(c)));
        drainCommandExitedAfterMs = Date.now() - signalAtMs;
        if (code !== 0) throw new Error(`meshext drain --forever exited ${code}`);
        // The app serves until its own shutdown; once nothing is in flight to it, it exits and kubelet SIGTERMs the sidecar.
        await until(quiet, exitDeadlineMs, "nothing in flight to the draining instance");
        await sleep(200);
        await leaving.app.close();
        sigtermAfterMs = Date.now() - signalAtMs;
        leaving.process.kill("SIGTERM");
        break;
      }
      case "envoy-sigterm":
        await unlist(cp.url, leaving.name);
        leaving.process.kill("SIGTERM");
        break;
      case "envoy-drain-listeners": {
        await unlist(cp.url, leaving.name);
        const res = await fetch(`${leaving.envoyAdminUrl}/drain_listeners?graceful`, { method: "POST" });
        await res.arrayBuffer();
        await sleep((o.envoyDrainTimeS ?? 3) * 1000);
        sigtermAfterMs = Date.now() - signalAtMs;
        leaving.process.kill("SIGTERM");
        break;
      }
    }
    const exit = await Promise.race([leaving.exited, sleep(exitDeadlineMs).then(() => undefined)]);
    ready.stop();
    const readyAt = await Promise.race([ready.at, sleep(1000).then(() => undefined)]);
    if (!exit) throw new Error(`${leaving.name} did not exit within ${exitDeadlineMs}ms:\n${leaving.output().slice(-3000)}`);
    log(`left after ${exit.atMs - signalAtMs} ms (status ${exit.code})`);
    // Then the load goes on against the staying instance
    await sleep(o.loadAfterMs ?? 1000);
    await load.stop();
    const unlistedAt = load.leftAtMs.get(leaving.name);
    return {
      requests: load.requests,
      failedRequests: load.requests.filter(failed),
      connections: load.connections,
      leavingName: leaving.name,
      stayingName: staying.name,
      signalAtMs,
      ...(readyAt !== undefined ? { readyFailedAfterMs: readyAt - signalAtMs } : {}),
      ...(drainCommandExitedAfterMs !== undefined ? { drainCommandExitedAfterMs } : {}),
      ...(sigtermAfterMs !== undefined ? { sigtermAfterMs } : {}),
      ...(unlistedAt !== undefined ? { unlistedAfterMs: unlistedAt - signalAtMs } : {}),
      exit: { code: exit.code, signal: exit.signal, afterMs: exit.atMs - signalAtMs },
      lines: leaving.lines(),
      output: leaving.output(),
    };
  } finally {
    await load?.stop();
    await Promise.all(instances.map((i) => i.stop()));
    await cp.stop();
    await dir.remove();
  }
}

/** Failed requests per 10 000 sent. */
export function failedPer10k(r: Pick<ScaleDownResult, "requests" | "failedRequests">): number {
  return r.requests.length === 0 ? 0 : (r.failedRequests.length / r.requests.length) * 10_000;
}
