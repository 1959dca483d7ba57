// Builds the control-plane clients from the sidecar's resolved flags, for the sidecar composition and `meshext up`.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import type { Registry } from "prom-client";
import { ConfigError, pinnedKumaVersion } from "../config/flags.js";
import type { SidecarConfig } from "../config/sidecar.js";
import type { Logger } from "../log.js";
import { dataplaneFromObject, dataplaneFromTags, dataplaneFromText, SERVICE_TAG, type Dataplane } from "../policy/documents/dataplane.js";
import { isObj } from "../policy/documents/issues.js";
import type { KumaVersion } from "../policy/model/kuma-version.js";
import { parseDocuments } from "../policy/documents/parse.js";
import { createDataplaneClient, type DataplaneIdentity, type HttpDataplaneClient } from "./dataplane-client.js";
import { createHttpPolicySource, type HttpPolicySource } from "./http-source.js";
import type { ApplyPolicies } from "./source.js";

/**
 * The HTTP policy source for `--control-plane` (undefined when the flag is empty); given `dataplane` (what the
 * engine decides for), it reads the control plane's set for that Dataplane when one is served.
 */
export function httpPolicySourceFromConfig(
  config: SidecarConfig,
  apply: ApplyPolicies,
  log: Logger,
  registry: Registry,
  kumaVersion?: KumaVersion,
  dataplane?: () => Dataplane,
  registered?: () => Record<string, unknown>,
): HttpPolicySource | undefined {
  if (!config.controlPlane) return undefined;
  return createHttpPolicySource({
    baseUrl: config.controlPlane,
    token: config.controlPlaneToken,
    mesh: config.mesh,
    pollIntervalMs: config.pollIntervalMs,
    maxListBytes: config.controlPlaneMaxListBytes,
    cacheFile: config.policyCacheFile,
    apply,
    kumaVersion,
    dataplane,
    registered,
    log,
    registry,
  });
}

/** This sidecar's Dataplane, read once from the flags: what the engine decides for and what is registered. */
export interface LocalDataplane {
  dataplane: Dataplane;
  /** The --dataplane-file resource, registered as-is (mesh filled in). */
  document?: Record<string, unknown>;
}

/** --dataplane-file, else --mesh/--dataplane-name/--dataplane-tags (name defaults to the host name, the service tag to the name). */
export function localDataplane(config: SidecarConfig): LocalDataplane {
  if (config.dataplaneFile) return dataplaneFromFile(config.dataplaneFile, pinnedKumaVersion(config.kumaVersion));
  const name = config.dataplaneName || hostname();
  const tags = config.dataplaneTags.includes(`${SERVICE_TAG}=`) ? config.dataplaneTags : [`${SERVICE_TAG}=${name}`, config.dataplaneTags].filter(Boolean).join(",");
  const result = dataplaneFromTags(config.mesh, tags, name);
  if (!result.dataplane) throw new ConfigError(`--dataplane-tags: ${describe(result.violations)}`);
  return { dataplane: result.dataplane };
}

/** Reads --dataplane-file (at start, and again when it changes); throws ConfigError with every violation. */
export function dataplaneFromFile(file: string, kumaVersion?: KumaVersion): LocalDataplane {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(`--dataplane-file: cannot read ${file}: ${(err as Error).message}`);
  }
  const doc = parseDocuments(text).find((d) => isObj(d.value) && d.value.type === "Dataplane");
  const result = doc ? dataplaneFromObject(doc.value, kumaVersion) : dataplaneFromText(text, kumaVersion);
  if (!result.dataplane) throw new ConfigError(`--dataplane-file ${file}: ${describe(result.violations)}`);
  return { dataplane: result.dataplane, document: { ...(doc!.value as Record<string, unknown>), mesh: result.dataplane.mesh } };
}

function describe(violations: ReadonlyArray<{ field: string; message: string }>): string {
  return violations.map((v) => `${v.field}: ${v.message}`).join("; ");
}

/** What the control plane is told about this dataplane (registration, draining, removal). */
export function dataplaneIdentity(config: SidecarConfig, local: LocalDataplane): DataplaneIdentity {
  const { mesh, name, inbounds } = local.dataplane;
  if (local.document) return { mesh, name, address: "", tags: {}, document: local.document };
  return { mesh, name, address: config.dataplaneAddress, tags: { ...inbounds[0]!.tags } };
}

/** The dataplane lifecycle client for `--control-plane` (undefined when the flag is empty, or with --no-register). */
export function dataplaneClientFromConfig(config: SidecarConfig, local: LocalDataplane, log: Logger): HttpDataplaneClient | undefined {
  if (!config.controlPlane || !config.register) return undefined;
  return createDataplaneClient({
    baseUrl: config.controlPlane,
    token: config.controlPlaneToken,
    dataplane: dataplaneIdentity(config, local),
    heartbeatIntervalMs: config.heartbeatIntervalMs,
    log,
  });
}
