// Which Kuma release the policy semantics follow, as the outside world states it: a pinned `--kuma-version`
// or a control plane's API root (`GET /`, the Index of `api/openapi/specs/api.yaml` @v2.14.3: {hostname,
// product, version, instanceId, clusterId, gui, basedOnKuma?}). The versions themselves and what each one
// does live in the engine's table (policy/model/kuma-version.ts); this adds readable errors and what we report.
import { DEFAULT_KUMA_VERSION, KUMA_VERSIONS, type KumaVersion, parseKumaVersion as engineVersion, versionTraits } from "../policy/model/kuma-version.js";

export { DEFAULT_KUMA_VERSION, type KumaVersion };

/** The release each minor is checked against (what the embedded control plane reports as `basedOnKuma`). */
const REFERENCE_RELEASE: Partial<Record<KumaVersion, string>> = { "2.14": "2.14.3" };

export function referenceRelease(version: KumaVersion): string {
  if (version.split(".").length > 2) return version;
  return REFERENCE_RELEASE[version] ?? `${version}.0`;
}

/**
 * `2.14` → "2.14", `2.7.29`, `v2.7.29`, `2.7.29-rc.1` → "2.7.29" (the patch level picks the fixes Kuma backported);
 * a readable error for anything the engine does not follow.
 */
export function parseKumaVersion(raw: string): { version: KumaVersion } | { error: string } {
  const version = engineVersion(raw);
  if (version) return { version };
  const supported = `supported: ${KUMA_VERSIONS[0]} to 2.14 (later 2.x releases follow 2.14) and ${KUMA_VERSIONS.at(-1)} (preview)`;
  const m = /^v?(\d+)\.(\d+)(?:[.\-+].*)?$/.exec(raw.trim());
  if (!m) return { error: `${JSON.stringify(raw)} is not a Kuma version such as 2.14 or 2.14.3 (${supported})` };
  return { error: `Kuma ${Number(m[1])}.${Number(m[2])} is not supported (${supported})` };
}

/**
 * What to say about a version Kuma has not released (3.0): its semantics follow Kuma's main branch and may
 * change before the release; undefined for released versions.
 */
export function previewNote(version: KumaVersion): string | undefined {
  if (!versionTraits(version).preview) return undefined;
  return `Kuma ${version} is a preview: meshext follows Kuma's unreleased main branch (docs/kuma-versions.md), which may still change`;
}

/**
 * The Kuma version a control plane's `GET /` body reports: `basedOnKuma` when present (distributions such
 * as Kong Mesh, and meshext's embedded control plane, carry their own `version`), else `version`.
 */
export function reportedKumaVersion(index: unknown): string | undefined {
  if (typeof index !== "object" || index === null) return undefined;
  const { basedOnKuma, version } = index as { basedOnKuma?: unknown; version?: unknown };
  if (typeof basedOnKuma === "string" && basedOnKuma !== "") return basedOnKuma;
  return typeof version === "string" && version !== "" ? version : undefined;
}
