// Reads the repo's envoy/ files (envoy.yaml, docker-compose.yml, prometheus.yml) and offers typed accessors
// for the parts the envoy tests check.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

export const ROOT = process.cwd();
export const ENVOY_DIR = join(ROOT, "envoy");
export const ENVOY_YAML = join(ENVOY_DIR, "envoy.yaml");
/** The mTLS variant of envoy.yaml (inbound listener with a DownstreamTlsContext). */
export const ENVOY_MTLS_YAML = join(ENVOY_DIR, "envoy-mtls.yaml");
/** Every shipped Envoy bootstrap: the static checks run over each. */
export const ENVOY_CONFIGS = [ENVOY_YAML, ENVOY_MTLS_YAML];
export const COMPOSE_YAML = join(ENVOY_DIR, "docker-compose.yml");
export const PROMETHEUS_YML = join(ENVOY_DIR, "prometheus.yml");
export const ALERTS_YML = join(ENVOY_DIR, "prometheus", "alerts.yml");
export const ALERTS_TEST_YML = join(ENVOY_DIR, "prometheus", "alerts.test.yml");
export const DASHBOARD_JSON = join(ENVOY_DIR, "grafana", "dashboards", "meshext.json");

// Loose shapes: the proto walk (protos.test.ts) is what proves the structure; these only navigate it.
/* eslint-disable @typescript-eslint/no-explicit-any */
export type Yaml = any;

export function readYaml(path: string): Yaml {
  return parse(readFileSync(path, "utf8"), { merge: true }); // `<<:` merge keys, as docker compose reads them
}

export const envoyConfig = (): Yaml => readYaml(ENVOY_YAML);

export interface SocketAddress {
  address: string;
  port_value: number;
}

export function listener(config: Yaml, name: string): Yaml {
  const found = (config.static_resources.listeners as Yaml[]).find((l) => l.name === name);
  if (!found) throw new Error(`envoy.yaml: no listener ${name}`);
  return found;
}

export function hcm(l: Yaml): Yaml {
  return l.filter_chains[0].filters.find((f: Yaml) => f.name === "envoy.filters.network.http_connection_manager").typed_config;
}

export function httpFilters(l: Yaml): Yaml[] {
  return hcm(l).http_filters as Yaml[];
}

export function httpFilter(l: Yaml, name: string): Yaml {
  const found = httpFilters(l).find((f) => f.name === name);
  if (!found) throw new Error(`envoy.yaml: listener ${l.name} has no ${name}`);
  return found.typed_config;
}

export function clusters(config: Yaml): Map<string, Yaml> {
  return new Map((config.static_resources.clusters as Yaml[]).map((c) => [c.name, c]));
}

/** The single endpoint address of a STATIC cluster. */
export function clusterAddress(config: Yaml, name: string): SocketAddress {
  const c = clusters(config).get(name);
  if (!c) throw new Error(`envoy.yaml: no cluster ${name}`);
  return c.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address;
}

export const hostPort = (a: SocketAddress): string => `${a.address}:${a.port_value}`;

/** Every cluster name referenced anywhere (route.cluster, envoy_grpc.cluster_name), with its path. */
export function referencedClusters(value: Yaml, path = ""): Array<{ path: string; cluster: string }> {
  const out: Array<{ path: string; cluster: string }> = [];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...referencedClusters(v, `${path}[${i}]`)));
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const at = path ? `${path}.${k}` : k;
      if ((k === "cluster" || k === "cluster_name") && typeof v === "string" && !at.includes("load_assignment")) out.push({ path: at, cluster: v });
      else out.push(...referencedClusters(v, at));
    }
  }
  return out;
}

/** Parses Envoy's "0.2s" / "5s" durations into milliseconds. */
export function durationMs(text: string): number {
  const m = /^(\d+(?:\.\d+)?)s$/.exec(text);
  if (!m) throw new Error(`not a Duration: ${text}`);
  return Math.round(Number(m[1]) * 1000);
}

/** The wasm filter's plugin configuration JSON text. */
export function wasmPluginConfig(config: Yaml): string {
  return httpFilter(listener(config, "inbound_8080"), "envoy.filters.http.wasm").config.configuration.value as string;
}
