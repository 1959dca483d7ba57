// Builds the control-plane clients from the sidecar's resolved flags, for the sidecar composition and `meshext up`.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import type { Registry } from "prom-client";
import { parse as parseYaml } from "yaml";
import { ConfigError } from "../config/flags.js";
import type { SidecarConfig } from "../config/sidecar.js";
import type { Logger } from "../log.js";
import { createDataplaneClient, type DataplaneIdentity, type HttpDataplaneClient, parseTags } from "./dataplane-client.js";
import { createHttpPolicySource, type HttpPolicySource } from "./http-source.js";
import type { ApplyPolicies } from "./source.js";

/** The HTTP policy source for `--control-plane` (undefined when the flag is empty). */
export function httpPolicySourceFromConfig(config: SidecarConfig, apply: ApplyPolicies, log: Logger, registry: Registry): HttpPolicySource | undefined {
  if (!config.controlPlane) return undefined;
  return createHttpPolicySource({
    baseUrl: config.controlPlane,
    token: config.controlPlaneToken,
    mesh: config.mesh,
    pollIntervalMs: config.pollIntervalMs,
    cacheFile: config.policyCacheFile,
    apply,
    log,
    registry,
  });
}

/** This sidecar's Dataplane: --dataplane-file as-is, else name/address/tags flags (name defaults to the host name). */
export function dataplaneIdentityFromConfig(config: SidecarConfig): DataplaneIdentity {
  if (config.dataplaneFile) {
    let doc: Record<string, unknown>;
    try {
      doc = parseYaml(readFileSync(config.dataplaneFile, "utf8"), { maxAliasCount: 0 }) as Record<string, unknown>;
    } catch (err) {
      throw new ConfigError(`--dataplane-file ${config.dataplaneFile}: ${(err as Error).message}`);
    }
    if (!doc || doc.type !== "Dataplane" || typeof doc.name !== "string") {
      throw new ConfigError(`--dataplane-file ${config.dataplaneFile}: expected a Kuma Dataplane (type: Dataplane, name, networking)`);
    }
    const mesh = typeof doc.mesh === "string" ? doc.mesh : config.mesh;
    return { mesh, name: doc.name, address: "", tags: {}, document: { ...doc, mesh } };
  }
  let tags: Record<string, string>;
  try {
    tags = parseTags(config.dataplaneTags);
  } catch (err) {
    throw new ConfigError(`--dataplane-tags: ${(err as Error).message}`);
  }
  const name = config.dataplaneName || hostname();
  if (!tags["kuma.io/service"]) tags["kuma.io/service"] = name;
  return { mesh: config.mesh, name, address: config.dataplaneAddress, tags };
}

/** The dataplane lifecycle client for `--control-plane` (undefined when the flag is empty). */
export function dataplaneClientFromConfig(config: SidecarConfig, log: Logger): HttpDataplaneClient | undefined {
  if (!config.controlPlane) return undefined;
  return createDataplaneClient({
    baseUrl: config.controlPlane,
    token: config.controlPlaneToken,
    dataplane: dataplaneIdentityFromConfig(config),
    heartbeatIntervalMs: config.heartbeatIntervalMs,
    log,
  });
}
