// One instance of a service for scale-down tests and benches: an echo app behind a real Envoy, either as
// `meshext run` (the sidecar, the generated bootstrap with the Lua shim, the wasm drain filter and ext_proc,
// registered in the control plane by the sidecar itself) or, for the "before" picture, Envoy alone on the same
// bootstrap without those filters, registered by this harness (as an endpoints controller would list a pod).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { Agent, get as httpGet } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { startEchoApp, type EchoApp } from "./envoy-stack.js";
import { freePort } from "./prometheus.js";
import type { FoundEnvoy } from "./real-envoy.js";

const CLI = join(process.cwd(), "dist", "extproc", "cli.js");
const SHIMMED_FILTERS = new Set(["envoy.filters.http.lua", "envoy.filters.http.wasm", "envoy.filters.http.ext_proc"]);

export interface InstanceOptions {
  name: string;
  controlPlane: string;
  envoy: FoundEnvoy;
  /** meshext: `meshext run`; envoy-alone: Envoy without meshext or its filters. */
  kind: "meshext" | "envoy-alone";
  drainMinMs?: number;
  drainTimeMs?: number;
  exitOnSigterm?: boolean;
  envoyKillGraceMs?: number;
  /** meshext, for self-checks: run `-- envoy -c FILE` on the generated bootstrap edited by this function. */
  editBootstrap?: (bootstrap: any) => any;
  /** meshext with editBootstrap: do not give the sidecar Envoy's admin (no health-check failure, no in-flight reading). */
  withoutEnvoyAdmin?: boolean;
  /** Envoy's own --drain-time-s (envoy-alone). */
  envoyDrainTimeS?: number;
}

export interface Instance {
  name: string;
  app: EchoApp;
  inboundPort: number;
  envoyAdminUrl: string;
  sidecarAdminUrl: string;
  /** The process to signal: meshext, or Envoy itself when alone. */
  process: ChildProcess;
  envoyPid(): number | undefined;
  output(): string;
  /** Parsed JSON log lines of meshext. */
  lines(): Record<string, unknown>[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>;
  /** Resolves once the instance serves through Envoy and is online in the control plane. */
  ready: Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Removes the Lua shim, the wasm drain filter and ext_proc from every HTTP connection manager of a bootstrap. */
export function withoutMeshextFilters(bootstrap: any, remove: ReadonlySet<string> = SHIMMED_FILTERS): any {
  for (const listener of bootstrap.static_resources?.listeners ?? []) {
    for (const chain of listener.filter_chains ?? []) {
      for (const f of chain.filters ?? []) {
        const hcm = f.typed_config;
        if (Array.isArray(hcm?.http_filters)) hcm.http_filters = hcm.http_filters.filter((h: { name: string }) => !remove.has(h.name));
      }
    }
  }
  return bootstrap;
}

function dataplaneYaml(name: string, inboundPort: number, appPort: number): string {
  return stringify({
    type: "Dataplane",
    mesh: "default",
    name,
    networking: { address: "127.0.0.1", inbound: [{ port: inboundPort, servicePort: appPort, tags: { "kuma.io/service": "backend", "kuma.io/protocol": "http" } }] },
  });
}

export async function startInstance(o: InstanceOptions): Promise<Instance> {
  const dir = mkdtempSync(join(tmpdir(), `meshext-${o.name}-`));
  const app = await startEchoApp();
  const [inboundPort, grpcPort, adminPort, envoyAdminPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const dataplaneFile = join(dir, "dataplane.yaml");
  const dataplaneText = dataplaneYaml(o.name, inboundPort, app.port);
  writeFileSync(dataplaneFile, dataplaneText);
  const envoyAdminUrl = `http://127.0.0.1:${envoyAdminPort}`;
  const sidecarAdminUrl = `http://127.0.0.1:${adminPort}`;
  const runFlags = [
    "--control-plane", o.controlPlane, "--dataplane-file", dataplaneFile, "--grpc-listen", `127.0.0.1:${grpcPort}`, "--admin-listen", `127.0.0.1:${adminPort}`,
    "--inbound-listen-host", "127.0.0.1", "--envoy-admin-listen", `127.0.0.1:${envoyAdminPort}`, "--envoy-stats-listen", "",
    "--drain-min", `${o.drainMinMs ?? 3000}ms`, "--drain-time", `${o.drainTimeMs ?? 20_000}ms`, "--heartbeat-interval", "1s", "--poll-interval", "500ms",
    "--envoy-kill-grace", `${o.envoyKillGraceMs ?? 5000}ms`, ...(o.exitOnSigterm ? ["--exit-on-sigterm"] : []),
  ];
  const env = { ...process.env, MESHEXT_ENVOY: o.envoy.path };
  const generated = () => {
    const run = spawnSync(process.execPath, [CLI, "bootstrap", ...runFlags], { encoding: "utf8", env });
    if (run.status !== 0) throw new Error(`meshext bootstrap failed: ${run.stderr}`);
    return parse(run.stdout);
  };

  let child: ChildProcess;
  let envoyPid: number | undefined;
  if (o.kind === "meshext") {
    let args = [CLI, "run", ...runFlags];
    if (o.editBootstrap) {
      const file = join(dir, "envoy.yaml");
      writeFileSync(file, stringify(o.editBootstrap(generated())));
      args = [...args, ...(o.withoutEnvoyAdmin ? [] : ["--envoy-admin", envoyAdminUrl]), "--", o.envoy.path, "-c", file, "--log-level", "warning"];
    }
    child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  } else {
    const file = join(dir, "envoy.yaml");
    writeFileSync(file, stringify(withoutMeshextFilters(generated())));
    child = spawn(o.envoy.path, ["-c", file, "--disable-hot-restart", "--log-level", "warning", "--concurrency", "1", ...(o.envoyDrainTimeS !== undefined ? ["--drain-time-s", String(o.envoyDrainTimeS)] : [])], { stdio: ["ignore", "pipe", "pipe"] });
    envoyPid = child.pid;
  }
  let out = "";
  const parsed: Record<string, unknown>[] = [];
  let partial = "";
  child.stdout!.on("data", (d: Buffer) => {
    out += d;
    partial += d;
    const lines = partial.split("\n");
    partial = lines.pop()!;
    for (const l of lines) {
      try {
        const line = JSON.parse(l) as Record<string, unknown>;
        parsed.push(line);
        if (line.msg === "envoy started") envoyPid = line.pid as number;
      } catch {
        // not a log line
      }
    }
  });
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal, atMs: Date.now() })));
  let gone = false;
  void exited.then(() => (gone = true));

  const dataplaneUrl = `${o.controlPlane}/meshes/default/dataplanes/${o.name}`;
  const ready = (async () => {
    const deadline = Date.now() + 40_000;
    const ok = async (url: string) => {
      try {
        const res = await fetch(url);
        await res.arrayBuffer();
        return res.status === 200;
      } catch {
        return false;
      }
    };
    while (!(await ok(`${envoyAdminUrl}/ready`)) || !(await ok(`http://127.0.0.1:${inboundPort}/`))) {
      if (gone || Date.now() > deadline) throw new Error(`${o.name} did not become ready (${gone ? "it exited" : "timed out"}):\n${out.slice(-3000)}`);
      await sleep(50);
    }
    if (o.kind === "envoy-alone") {
      // Listed as an endpoints controller lists a ready pod (no heartbeat within a test: the offline timeout is 30 s).
      const res = await fetch(dataplaneUrl, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(parse(dataplaneText)) });
      if (res.status >= 300) throw new Error(`registering ${o.name}: ${res.status} ${await res.text()}`);
    }
    while (!(await ok(dataplaneUrl))) {
      if (gone || Date.now() > deadline) throw new Error(`${o.name} is not registered in the control plane:\n${out.slice(-3000)}`);
      await sleep(50);
    }
    // Envoy's /ready can answer before `meshext run` sees it LIVE and logs "envoy started" with its pid: ready means both.
    while (envoyPid === undefined) {
      if (gone || Date.now() > deadline) throw new Error(`${o.name} never logged "envoy started":\n${out.slice(-3000)}`);
      await sleep(20);
    }
  })();
  ready.catch(() => {});

  return {
    name: o.name,
    app,
    inboundPort,
    envoyAdminUrl,
    sidecarAdminUrl,
    process: child,
    envoyPid: () => envoyPid,
    output: () => out,
    lines: () => parsed,
    exited,
    ready,
    async stop() {
      if (!gone) child.kill("SIGKILL");
      if (envoyPid && envoyPid !== child.pid) {
        try {
          process.kill(envoyPid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      await exited;
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Removes an instance from the control plane's list, as the endpoints controller does when its pod is deleted. */
export async function unlist(controlPlane: string, name: string): Promise<void> {
  const res = await fetch(`${controlPlane}/meshes/default/dataplanes/${name}`, { method: "DELETE" });
  await res.arrayBuffer();
}

/**
 * Polls `url` back to back and resolves with the time the first answer with `status` arrived (undefined if
 * `stop()` came first). Started before the signal, so the first such answer is seen within one round trip.
 */
export function firstStatus(url: string, status: number): { at: Promise<number | undefined>; stop(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let stopped = false;
  const at = (async () => {
    while (!stopped) {
      const got = await new Promise<number | undefined>((resolve) => {
        const req = httpGet(url, { agent }, (res) => {
          res.resume();
          res.once("end", () => resolve(res.statusCode));
        });
        req.once("error", () => resolve(undefined));
      });
      if (got === status) {
        agent.destroy();
        return Date.now();
      }
      if (got === undefined) await sleep(2);
    }
    agent.destroy();
    return undefined;
  })();
  return { at, stop: () => void (stopped = true) };
}

