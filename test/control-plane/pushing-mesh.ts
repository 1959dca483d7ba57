// Test parts for decision-sample pushes, all real processes on loopback ports: `meshext control-plane`, a `meshext
// sidecar` following it (optionally with --decision-log-push), its ext_proc client, and both sides' /metrics read back.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExecutionContext } from "ava";
import { startChildSidecarOnFreePorts } from "../helpers/child-sidecar.js";
import { sidecarEnv } from "../helpers/sidecar-env.js";
import { EnvoyExtProcClient } from "../helpers/envoy-ext-proc-client.js";
import { pollUntil } from "../helpers/poll-until.js";
import { promSamples } from "../helpers/prometheus-text.js";
import { freePort } from "../helpers/prometheus.js";
import { CLI, meshext, ROOT, samplePoliciesWithoutFaults } from "../policy-tools/run-cli.js";

export const DATAPLANE_FILE = join(ROOT, "envoy", "dataplane.yaml");
export const xfcc = (service: string): [string, string] => ["x-forwarded-client-cert", `By=spiffe://default/backend;URI=spiffe://default/${service}`];

/** A temp dir removed when the test ends. */
export function tempDirFor(t: ExecutionContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

/** `meshext control-plane` on a free port with `args`; resolves with its URL once `GET /` answers. */
export async function controlPlaneProcess(t: ExecutionContext, args: string[] = []): Promise<string> {
  return (await controlPlaneChild(t, args)).url;
}

/** controlPlaneProcess, with a way to stop it (SIGKILL) before the test ends. */
export async function controlPlaneChild(t: ExecutionContext, args: string[] = []): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const dir = tempDirFor(t, "meshext-cp-push-");
  const child = spawn(process.execPath, [CLI, "control-plane", "--listen", `127.0.0.1:${port}`, "--data-dir", join(dir, "data"), "--log-level", "warn", ...args], { stdio: ["ignore", "ignore", "pipe"], env: sidecarEnv() });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  t.teardown(() => stopped(child));
  const url = `http://127.0.0.1:${port}`;
  await pollUntil(`the control plane at ${url} (${stderr})`, async () => (await fetch(url + "/")).status, (s) => s === 200, 15_000);
  return { url, stop: () => stopped(child) };
}

/** The sample policies without their random faults, written to the control plane with `meshext policy apply`. */
export async function seedSamplePolicies(t: ExecutionContext, cpUrl: string): Promise<void> {
  const policies = samplePoliciesWithoutFaults(join(tempDirFor(t, "meshext-seed-"), "policies"));
  const applied = await meshext(["policy", "apply", policies, "--control-plane", cpUrl]);
  t.is(applied.code, 0, applied.stdout + applied.stderr);
}

export interface SidecarProcess {
  adminUrl: string;
  envoy: EnvoyExtProcClient;
}

/** `meshext sidecar --control-plane URL --dataplane-file envoy/dataplane.yaml ARGS…` (backend-1), once ready. */
export async function sidecarProcess(t: ExecutionContext, cpUrl: string, args: string[]): Promise<SidecarProcess> {
  const { child, grpcPort, adminPort } = await startChildSidecarOnFreePorts(["--control-plane", cpUrl, "--poll-interval", "200ms", "--dataplane-file", DATAPLANE_FILE, ...args]);
  t.teardown(() => stopped(child));
  // Registered before any traffic: pushes for a dataplane the control plane does not know are refused (404).
  await pollUntil("backend-1 registered", async () => (await fetch(`${cpUrl}/meshes/default/dataplanes/backend-1`)).status, (s) => s === 200, 15_000);
  const envoy = new EnvoyExtProcClient(`127.0.0.1:${grpcPort}`, { messageTimeoutMs: 5000 });
  t.teardown(() => envoy.close());
  return { adminUrl: `http://127.0.0.1:${adminPort}`, envoy };
}

/** Three allowed requests from web (x-request-id web-0…2) and one denied from billing (billing-1), as the what-if tests make. */
export async function webAndBillingTraffic(t: ExecutionContext, envoy: EnvoyExtProcClient): Promise<void> {
  for (let i = 0; i < 3; i++) t.not((await envoy.request({ method: "GET", path: `/orders/${i}`, headers: [xfcc("web"), ["x-request-id", `web-${i}`]] })).status, 403);
  t.is((await envoy.request({ method: "POST", path: "/admin", headers: [xfcc("billing"), ["x-request-id", "billing-1"]] })).status, 403);
}

/** The sum of the samples of `/metrics` at `base` whose key starts with `prefix` (a name, or a name with labels). */
export async function metric(base: string, prefix: string): Promise<number> {
  const samples = promSamples(await (await fetch(base + "/metrics")).text());
  return [...samples].filter(([k]) => k === prefix || k.startsWith(prefix + "{")).reduce((sum, [, v]) => sum + v, 0);
}

/** Waits until `/metrics` at `base` has `prefix` at `value`. */
export function metricReaches(base: string, prefix: string, holds: (v: number) => boolean, timeoutMs = 15_000): Promise<number> {
  return pollUntil(`${prefix} at ${base}`, () => metric(base, prefix), holds, timeoutMs);
}
