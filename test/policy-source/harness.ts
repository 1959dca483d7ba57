// Runs an HttpPolicySource in a test: records every applied set, exposes its metrics registry.
import { Registry } from "prom-client";
import { loadSidecarConfig } from "../../extproc/config/sidecar.js";
import { silentLogger } from "../../extproc/log.js";
import { Backoff } from "../../extproc/policy-source/backoff.js";
import { createHttpPolicySource, type HttpPolicySource, type HttpPolicySourceOptions } from "../../extproc/policy-source/http-source.js";
import type { MeshResources } from "../../extproc/policy/documents/resources.js";
import type { Policy } from "../../extproc/policy/model/types.js";
import type { RequestFacts } from "../../extproc/decision.js";

export interface Applied {
  policies: Policy[];
  origin: string;
  resources?: MeshResources;
}

const SIDECAR_DEFAULTS = loadSidecarConfig([], {}).config;

export function sourceFor(baseUrl: string, opts: Partial<HttpPolicySourceOptions> = {}) {
  const applied: Applied[] = [];
  const registry = new Registry();
  const source: HttpPolicySource = createHttpPolicySource({
    baseUrl,
    mesh: "default",
    pollIntervalMs: 60_000,
    requestTimeoutMs: 2000,
    maxListBytes: SIDECAR_DEFAULTS.controlPlaneMaxListBytes,
    apply: (policies, origin, resources) => applied.push({ policies, origin, resources }),
    log: silentLogger(),
    registry,
    backoff: new Backoff({ initialMs: 50, maxMs: 200, factor: 2 }),
    ...opts,
  });
  const names = () => (applied.at(-1)?.policies ?? []).map((p) => p.name).sort();
  const metric = async (name: string, labels: Record<string, string> = {}) => {
    const m = (await registry.getSingleMetric(name)?.get())?.values ?? [];
    return m.filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val)).reduce((n, v) => n + v.value, 0);
  };
  return { source, applied, names, metric, registry };
}

/** An inbound GET from `client`, identified by x-kuma-tags (engines built with trustKumaTagsHeader). */
export const inboundFacts = (client: string): RequestFacts => ({
  direction: "inbound",
  method: "GET",
  path: "/",
  authority: "backend",
  scheme: "http",
  headers: new Map([["x-kuma-tags", `&kuma.io/service=${client}&`]]),
  peerUriSans: [],
});
