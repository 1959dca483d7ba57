// Which Kuma release the policy semantics follow: the versions meshext emulates, parsing a pinned
// `--kuma-version` or a control plane's reported one, and reading Kuma's API root (`GET /`, the Index of
// `api/openapi/specs/api.yaml` @v2.14.3: {hostname, product, version, instanceId, clusterId, gui, basedOnKuma?}).
// Pure: shared by the sidecar (detection) and the embedded control plane (what it reports).

/** Kuma minor releases whose semantics meshext can follow (2.6 through 2.14), oldest first. */
export const SUPPORTED_KUMA_VERSIONS = ["2.6", "2.7", "2.8", "2.9", "2.10", "2.11", "2.12", "2.13", "2.14"] as const;
export type KumaVersion = (typeof SUPPORTED_KUMA_VERSIONS)[number];

/** For a policy directory and the embedded control plane, unless pinned. */
export const DEFAULT_KUMA_VERSION: KumaVersion = "2.14";

/** The release each minor is checked against (what the embedded control plane reports as `basedOnKuma`). */
const REFERENCE_RELEASE: Partial<Record<KumaVersion, string>> = { "2.14": "2.14.3" };

export function referenceRelease(version: KumaVersion): string {
  return REFERENCE_RELEASE[version] ?? `${version}.0`;
}

/** `2.14`, `2.14.3`, `v2.14.3`, `2.14.3-rc.1` → "2.14"; an error message for anything else or an unsupported minor. */
export function parseKumaVersion(raw: string): { version: KumaVersion } | { error: string } {
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+][0-9A-Za-z.-]+)?$/.exec(raw.trim());
  const supported = `supported: ${SUPPORTED_KUMA_VERSIONS[0]} to ${SUPPORTED_KUMA_VERSIONS.at(-1)}`;
  if (!m) return { error: `${JSON.stringify(raw)} is not a Kuma version such as 2.14 or 2.14.3 (${supported})` };
  const minor = `${Number(m[1])}.${Number(m[2])}`;
  const known = SUPPORTED_KUMA_VERSIONS.find((v) => v === minor);
  return known ? { version: known } : { error: `Kuma ${minor} is not supported (${supported})` };
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
