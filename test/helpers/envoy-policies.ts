// For real-Envoy policy tests: Kuma policy YAML written to a temp dir with the Dataplane the sidecar runs as, a wait
// until the sidecar has it in force, raw HTTP/1.1 requests through Envoy (with a Host header, which fetch cannot
// send) and the sidecar's own counters from its /metrics.
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExecutionContext } from "ava";
import type { EnvoyStack } from "./envoy-stack.js";

/** The Dataplane of every stack: `backend-1`, inbound 8080 (the name the generated inbound listener carries). */
export const BACKEND_DATAPLANE = `type: Dataplane
mesh: default
name: backend-1
networking:
  address: 127.0.0.1
  inbound:
    - port: 8080
      tags:
        kuma.io/service: backend
        kuma.io/protocol: http
  outbound:
    - port: 10001
      tags:
        kuma.io/service: payments
`;

/** Writes `policies` (YAML documents, `mesh: default` implied) and the Dataplane; returns the sidecar flags loading them. */
export function policySidecarArgs(t: ExecutionContext, policies: string[], dataplane = BACKEND_DATAPLANE): string[] {
  const dir = mkdtempSync(join(tmpdir(), "meshext-real-policies-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const policyDir = join(dir, "policies");
  writeFileSync(join(dir, "dataplane.yaml"), dataplane);
  mkdirSync(policyDir);
  policies.forEach((doc, i) => writeFileSync(join(policyDir, `policy-${i}.yaml`), /^mesh:/m.test(doc) || /^type: Mesh$/m.test(doc) ? doc : `mesh: default\n${doc.trim()}\n`));
  return ["--policies", policyDir, "--dataplane-file", join(dir, "dataplane.yaml")];
}

const indent = (yaml: string, spaces: number) => yaml.trim().replace(/^/gm, " ".repeat(spaces));

/** A policy of `kind` on backend whose one `from` item (every client, `kind: Mesh`) has `conf` as its default. */
export function fromEveryClient(kind: string, name: string, conf: string): string {
  return `type: ${kind}
name: ${name}
spec:
  targetRef: {kind: MeshService, name: backend}
  from:
    - targetRef: {kind: Mesh}
      default:
${indent(conf, 8)}
`;
}

/** The MeshHTTPRoute backend → payments with one rule, for paths under /api, whose filters are `filters`. */
export function routeToPayments(filters: string): string {
  return `type: MeshHTTPRoute
name: backend-to-payments
spec:
  targetRef: {kind: MeshService, name: backend}
  to:
    - targetRef: {kind: MeshService, name: payments}
      rules:
        - matches: [{path: {type: PathPrefix, value: /api}}]
          default:
            filters:
${indent(filters, 14)}
`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the sidecar's GET /ready answers 200 (its policy set is in force); throws with its reasons after `timeoutMs`. */
export async function waitSidecarReady(stack: EnvoyStack, timeoutMs = 15_000): Promise<void> {
  const url = `http://${stack.sidecar!.sidecar.adminAddress}/ready`;
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    const res = await fetch(url);
    last = await res.text();
    if (res.status === 200) return;
    await sleep(25);
  }
  throw new Error(`sidecar not ready after ${timeoutMs}ms: ${last}`);
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** Header names and values as sent, in order (repeated headers stay separate). */
  rawHeaders: string[];
  body: string;
  /** From the request's start to the response's last byte. */
  elapsedMs: number;
}

/** One HTTP/1.1 request to 127.0.0.1:`port` on a fresh connection. */
export function rawRequest(port: number, path: string, headers: Record<string, string> = {}, method = "GET"): Promise<RawResponse> {
  const startedMs = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, method, headers: { connection: "close", ...headers }, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, body, elapsedMs: performance.now() - startedMs }));
      res.on("error", reject);
    });
    req.setTimeout(20_000, () => req.destroy(new Error(`no answer from 127.0.0.1:${port}${path} in 20s`)));
    req.on("error", reject);
    req.end();
  });
}

/** Values of header `name` in a raw header list (lower-cased comparison). */
export function headerValues(raw: string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) out.push(raw[i + 1]!);
  return out;
}

/** The sum of a sidecar metric's samples whose labels include `labels` (0 when none). */
export async function sidecarMetric(stack: EnvoyStack, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`http://${stack.sidecar!.sidecar.adminAddress}/metrics`)).text();
  let sum = 0;
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? ([0-9.eE+-]+|NaN)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[3] ?? "").matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[4]);
  }
  return sum;
}

/** One counter (or gauge) of Envoy's /stats, 0 when Envoy has not created it yet. */
export async function envoyStat(stack: EnvoyStack, name: string): Promise<number> {
  return (await stack.envoy.stats(`^${name.replace(/[.]/g, "\\.")}$`)).get(name) ?? 0;
}
