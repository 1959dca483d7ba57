// `meshext drain` and `meshext wait-ready`: run inside the sidecar's container (kubelet exec hooks
// and probes) against its loopback admin port, so nothing that drains needs to face the network.
import { formatHelp } from "../config/flags.js";
import { DRAIN_FLAGS, loadDrainClientConfig, loadWaitReadyConfig, WAIT_READY_FLAGS } from "../config/admin-client.js";
import { describeFetchError } from "../fetch-error.js";

export const DRAIN_USAGE = "meshext drain [--forever] [--admin URL] [--timeout 60s]";
export const DRAIN_SUMMARY =
  "Starts the sidecar's drain through its admin port. Without --forever: waits until draining is complete\n" +
  "(a classic sidecar's preStop). With --forever: drain forever and return at once (a native sidecar's preStop).";
export const WAIT_READY_USAGE = "meshext wait-ready [--timeout 60s] [--admin URL] [--envoy-admin URL]";
export const WAIT_READY_SUMMARY =
  "Exits 0 once the sidecar's /ready and Envoy's /ready answer 200; exits 1 at --timeout (0: check once).\n" +
  "A classic sidecar's postStart hook and a native sidecar's startupProbe run it.";

const POLL_MS = 250;
const CHECK_TIMEOUT_MS = 2000;

function headers(c: { adminToken: string }): Record<string, string> {
  return c.adminToken ? { authorization: `Bearer ${c.adminToken}` } : {};
}

async function fetchWithin(url: string, init: RequestInit, timeoutMs: number): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(Math.max(1, timeoutMs)) });
}

export async function drainMain(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { config, parsed } = loadDrainClientConfig(argv, env);
  if (parsed.help) {
    process.stdout.write(formatHelp(DRAIN_USAGE, DRAIN_SUMMARY, DRAIN_FLAGS));
    return 0;
  }
  const url = `${config.admin.replace(/\/+$/, "")}/drain?${config.forever ? "mode=forever" : "wait=true"}`;
  try {
    const res = await fetchWithin(url, { method: "POST", headers: headers(config) }, config.timeoutMs);
    const body = (await res.text()).trim();
    if (!res.ok) {
      process.stderr.write(`meshext drain: ${url} answered ${res.status}: ${body}\n`);
      return 1;
    }
    process.stdout.write(body + "\n");
    return 0;
  } catch (err) {
    process.stderr.write(`meshext drain: POST ${url}: ${describeFetchError(err, config.timeoutMs)}\n`);
    return 1;
  }
}

async function isReady(url: string, init: RequestInit, timeoutMs: number): Promise<string | undefined> {
  try {
    const res = await fetchWithin(url, init, timeoutMs);
    const body = (await res.text()).trim();
    return res.status === 200 ? undefined : `${url} answered ${res.status}: ${body.slice(0, 200)}`;
  } catch (err) {
    return `${url}: ${describeFetchError(err, timeoutMs)}`;
  }
}

export async function waitReadyMain(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { config, parsed } = loadWaitReadyConfig(argv, env);
  if (parsed.help) {
    process.stdout.write(formatHelp(WAIT_READY_USAGE, WAIT_READY_SUMMARY, WAIT_READY_FLAGS));
    return 0;
  }
  const targets = [`${config.admin.replace(/\/+$/, "")}/ready`];
  if (config.envoyAdmin) targets.push(`${config.envoyAdmin.replace(/\/+$/, "")}/ready`);
  const deadline = Date.now() + config.timeoutMs;
  for (;;) {
    // Each check gets 2 s (a startupProbe's timeoutSeconds is 3), even a single --timeout=0s check.
    const problems = (await Promise.all(targets.map((u) => isReady(u, { headers: headers(config) }, CHECK_TIMEOUT_MS)))).filter((p) => p !== undefined);
    if (problems.length === 0) {
      process.stdout.write(`ready: ${targets.join(", ")}\n`);
      return 0;
    }
    if (Date.now() + POLL_MS > deadline) {
      process.stderr.write(`meshext wait-ready: not ready within ${config.timeoutMs}ms: ${problems.join("; ")}\n`);
      return 1;
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
