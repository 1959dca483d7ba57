// Which Kuma version the sidecar's policy semantics follow: `--kuma-version` when pinned, else what the
// control plane reports at its API root (`GET /`: `basedOnKuma`, else `version`), else 2.14 (a policy
// directory, or a control plane that cannot be reached at start). An unsupported version is a ConfigError.
import { ConfigError, pinnedKumaVersion } from "../config/flags.js";
import { DEFAULT_KUMA_VERSION, type KumaVersion, parseKumaVersion, reportedKumaVersion } from "../kuma-rest/kuma-version.js";

export interface ResolvedKumaVersion {
  version: KumaVersion;
  /** How it was chosen, for the startup log: "flag", "control-plane", "default". */
  from: "flag" | "control-plane" | "default";
  /** What the control plane reported, when it was asked. */
  reported?: string;
  /** Why detection fell back to the default. */
  warning?: string;
}

export interface VersionSettings {
  kumaVersion: string;
  controlPlane: string;
  controlPlaneToken: string;
}

export async function resolveKumaVersion(config: VersionSettings, timeoutMs = 5000): Promise<ResolvedKumaVersion> {
  const pinned = pinnedKumaVersion(config.kumaVersion);
  if (pinned) return { version: pinned, from: "flag" };
  if (!config.controlPlane) return { version: DEFAULT_KUMA_VERSION, from: "default" };
  const url = `${config.controlPlane}/`;
  let body: unknown;
  try {
    const headers: Record<string, string> = { accept: "application/json" };
    if (config.controlPlaneToken) headers.authorization = `Bearer ${config.controlPlaneToken}`;
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
    if (res.status !== 200) {
      await res.body?.cancel();
      return fallback(`GET ${url} answered ${res.status}`);
    }
    body = await res.json();
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return fallback(`GET ${url} failed: ${cause ?? (err as Error).message}`);
  }
  const reported = reportedKumaVersion(body);
  if (reported === undefined) return fallback(`GET ${url} reports no version (not a Kuma API root?)`);
  const parsed = parseKumaVersion(reported);
  if ("error" in parsed) {
    throw new ConfigError(`the control plane at ${config.controlPlane} reports version ${JSON.stringify(reported)}: ${parsed.error}; pin the semantics with --kuma-version`);
  }
  return { version: parsed.version, from: "control-plane", reported };
}

function fallback(warning: string): ResolvedKumaVersion {
  return { version: DEFAULT_KUMA_VERSION, from: "default", warning: `${warning}; following Kuma ${DEFAULT_KUMA_VERSION} (pin with --kuma-version)` };
}
