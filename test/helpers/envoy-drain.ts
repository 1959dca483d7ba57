// Drain for a real-Envoy stack: the sidecar's drain controller installed on the in-process test sidecar, started
// with its admin's POST /drain as an operator's hook would, and the wasm filter's view of it read from Envoy.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { DrainController } from "../../extproc/drain/controller.js";
import { installDrain, type DrainSettings } from "../../extproc/drain/install.js";
import type { EnvoyStack } from "./envoy-stack.js";
import { pollUntil } from "./poll-until.js";
import { promSamples } from "./prometheus-text.js";

/** wasm/contract.json: the literals (metric names, headers) the filter and the TypeScript side share. */
export const WASM_CONTRACT = JSON.parse(readFileSync(join(process.cwd(), "wasm", "contract.json"), "utf8")) as Record<string, string>;
const contract = WASM_CONTRACT;

/** A drain that lasts the whole test (Envoy is not told: only the wasm filter, polling GET /drain, acts on it). */
export const LONG_DRAIN: DrainSettings = { envoyAdmin: "", inboundStatPrefix: "inbound", drainMinMs: 60_000, drainTimeMs: 60_000, drainListeners: false, envoyKillGraceMs: 1000 };

export function installStackDrain(stack: EnvoyStack, settings: Partial<DrainSettings> = {}): DrainController {
  if (!stack.sidecar) throw new Error("installStackDrain: the stack's sidecar is the test's own");
  return installDrain(stack.sidecar.sidecar, { ...LONG_DRAIN, ...settings });
}

/** POST /drain on the sidecar's admin (loopback), as `meshext drain` does; resolves with the status. */
export async function postDrain(stack: EnvoyStack): Promise<number> {
  const res = await fetch(`${stack.sidecar!.adminUrl}/drain`, { method: "POST" });
  await res.text();
  return res.status;
}

/** The wasm filter's metrics on Envoy's admin /stats/prometheus. */
export async function wasmMetrics(stack: EnvoyStack): Promise<Map<string, number>> {
  return promSamples(await stack.envoy.prometheus());
}

/**
 * Waits until the filter acts on `draining` where requests are served: its gauge moves as soon as the polling VM
 * adopts the state, the worker VMs only on their next tick, so this waits for the health path's answer itself.
 */
export async function untilFilterDraining(stack: EnvoyStack, draining: boolean, timeoutMs = 30_000): Promise<void> {
  const want = draining ? 503 : 200;
  await pollUntil(`${contract.defaultHealthPath} answering ${want}`, async () => {
    const res = await fetch(`${stack.inboundUrl}${contract.defaultHealthPath}`, { headers: { connection: "close" } });
    await res.text();
    return res.status;
  }, (status) => status === want, timeoutMs);
}
