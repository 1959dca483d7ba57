// A second host for network tests: two network namespaces ("pod" and "peer") joined by a veth pair,
// with addresses of their own. Root and `ip` are needed; `available()` says why not otherwise.
// Processes run inside a namespace with `ip netns exec`; everything is removed by `destroy()`.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { which } from "./tools.js";

const FETCH_SCRIPT = fileURLToPath(new URL("./netns-fetch.js", import.meta.url));

export interface NetnsPair {
  podNs: string;
  peerNs: string;
  podIp: string;
  peerIp: string;
  /** Runs `argv` inside the pod namespace. */
  spawnInPod(argv: string[], env?: NodeJS.ProcessEnv): ChildProcess;
  /** Runs `argv` inside either namespace. */
  spawnIn(ns: "pod" | "peer", argv: string[], env?: NodeJS.ProcessEnv): ChildProcess;
  /** An HTTP request made from inside a namespace (node's fetch), never throwing. */
  fetchFrom(ns: "pod" | "peer", url: string, init?: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number }): Promise<FetchResult>;
  destroy(): void;
}

/** `atMs`: when the response was complete, as seen inside the namespace. */
export type FetchResult = { status: number; body: string; atMs: number } | { error: string };

/** undefined when the test can run, else the reason it cannot. */
export function netnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return "not root: network namespaces need root";
  if (!which("ip")) return "no `ip` command (Debian package iproute2)";
  return undefined;
}

function ip(...args: string[]): void {
  execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
}

export function createNetnsPair(): NetnsPair {
  const id = `${process.pid % 100000}${Math.floor(Math.random() * 100)}`;
  const podNs = `mxpod${id}`;
  const peerNs = `mxpeer${id}`;
  const vethPod = `mxa${id}`.slice(0, 15);
  const vethPeer = `mxb${id}`.slice(0, 15);
  // A /30 in 10.213.0.0/16 picked at random, only ever routed inside these two namespaces.
  const base = 4 * Math.floor(Math.random() * 16000);
  const octets = (n: number) => `10.213.${Math.floor(n / 256)}.${n % 256}`;
  const podIp = octets(base + 1);
  const peerIp = octets(base + 2);
  const agents: Partial<Record<"pod" | "peer", FetchAgent>> = {};
  const destroy = () => {
    for (const agent of Object.values(agents)) agent?.child.kill("SIGKILL");
    for (const ns of [podNs, peerNs]) {
      try {
        ip("netns", "delete", ns); // also removes the veth end inside it, and so its pair
      } catch {
        // not created
      }
    }
  };
  try {
    ip("netns", "add", podNs);
    ip("netns", "add", peerNs);
    ip("link", "add", vethPod, "type", "veth", "peer", "name", vethPeer);
    ip("link", "set", vethPod, "netns", podNs);
    ip("link", "set", vethPeer, "netns", peerNs);
    for (const [ns, dev, addr] of [[podNs, vethPod, podIp], [peerNs, vethPeer, peerIp]] as const) {
      ip("-n", ns, "addr", "add", `${addr}/30`, "dev", dev);
      ip("-n", ns, "link", "set", dev, "up");
      ip("-n", ns, "link", "set", "lo", "up");
    }
  } catch (err) {
    destroy();
    throw err;
  }
  const nsOf = (which: "pod" | "peer") => (which === "pod" ? podNs : peerNs);
  return {
    podNs,
    peerNs,
    podIp,
    peerIp,
    spawnInPod(argv, env = process.env) {
      return spawn("ip", ["netns", "exec", podNs, ...argv], { env, stdio: ["ignore", "pipe", "pipe"] });
    },
    spawnIn(which, argv, env = process.env) {
      return spawn("ip", ["netns", "exec", nsOf(which), ...argv], { env, stdio: ["ignore", "pipe", "pipe"] });
    },
    fetchFrom(which, url, init = {}) {
      const agent = (agents[which] ??= startAgent(nsOf(which)));
      return agent.request({ url, ...init });
    },
    destroy,
  };
}

interface FetchAgent {
  child: ChildProcess;
  request(init: { url: string; method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number }): Promise<FetchResult>;
}

/** A long-lived netns-fetch process inside a namespace, answering requests by id. */
function startAgent(ns: string): FetchAgent {
  const child = spawn("ip", ["netns", "exec", ns, process.execPath, FETCH_SCRIPT], { stdio: ["pipe", "pipe", "pipe"] });
  const pending = new Map<number, (r: FetchResult) => void>();
  let nextId = 1;
  let buffered = "";
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf("\n")) !== -1) {
      const { id, ...result } = JSON.parse(buffered.slice(0, nl)) as { id: number } & FetchResult;
      buffered = buffered.slice(nl + 1);
      pending.get(id)?.(result as FetchResult);
      pending.delete(id);
    }
  });
  child.on("exit", () => {
    for (const resolve of pending.values()) resolve({ error: `netns-fetch agent exited: ${stderr}` });
    pending.clear();
  });
  return {
    child,
    request(init) {
      const id = nextId++;
      return new Promise((resolve) => {
        pending.set(id, resolve);
        child.stdin!.write(JSON.stringify({ id, ...init }) + "\n");
      });
    },
  };
}
