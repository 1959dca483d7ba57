// The probe port's paths: how a rewritten kubelet probe names the app's real probe. One path per
// probe, readable and reversible (re-injection and opt-out restore the original from it):
//   /<port><path>           HTTP GET to the app's port and path (query kept)
//   /https/<port><path>     the same over TLS (not verified, as kubelet does not verify)
//   /tcp/<port>             a TCP connect to the app's port
//   /grpc/<port>[/<service>] the gRPC health check (grpc.health.v1.Health/Check) on the app's port
// The shape follows Kuma's virtual probes and its application probe proxy (kumahq/kuma
// docs/madr/decisions/046-grpc-tcp-probes.md), written here in our own terms. Pure.

export type VirtualProbe =
  | { kind: "http" | "https"; port: number; path: string }
  | { kind: "tcp"; port: number }
  | { kind: "grpc"; port: number; service: string };

function validPort(text: string): number | undefined {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 && n <= 65535 ? n : undefined;
}

/** The path kubelet asks the probe port for. */
export function virtualPath(p: VirtualProbe): string {
  switch (p.kind) {
    case "http":
      return `/${p.port}${p.path.startsWith("/") ? p.path : `/${p.path}`}`;
    case "https":
      return `/https/${p.port}${p.path.startsWith("/") ? p.path : `/${p.path}`}`;
    case "tcp":
      return `/tcp/${p.port}`;
    case "grpc":
      return `/grpc/${p.port}${p.service ? `/${encodeURIComponent(p.service)}` : ""}`;
  }
}

/** The probe a path names; undefined for any other path. */
export function parseVirtualPath(path: string): VirtualProbe | undefined {
  let m = /^\/(\d{1,5})(\/.*)?$/s.exec(path);
  if (m) {
    const port = validPort(m[1]!);
    return port === undefined ? undefined : { kind: "http", port, path: m[2] ?? "/" };
  }
  m = /^\/https\/(\d{1,5})(\/.*)?$/s.exec(path);
  if (m) {
    const port = validPort(m[1]!);
    return port === undefined ? undefined : { kind: "https", port, path: m[2] ?? "/" };
  }
  m = /^\/tcp\/(\d{1,5})$/.exec(path);
  if (m) {
    const port = validPort(m[1]!);
    return port === undefined ? undefined : { kind: "tcp", port };
  }
  m = /^\/grpc\/(\d{1,5})(?:\/([^/?#]+))?$/.exec(path);
  if (m) {
    const port = validPort(m[1]!);
    if (port === undefined) return undefined;
    let service = "";
    try {
      service = m[2] === undefined ? "" : decodeURIComponent(m[2]);
    } catch {
      return undefined;
    }
    return { kind: "grpc", port, service };
  }
  return undefined;
}

/**
 * The --app-probes flag value: the virtual paths, comma-separated (a comma inside a path is written
 * %2C, so the list splits unambiguously). Sorted and without duplicates: the same probes give the same flag.
 */
export function formatProbeList(probes: readonly VirtualProbe[]): string {
  const paths = [...new Set(probes.map((p) => virtualPath(p).replaceAll(",", "%2C")))];
  return paths.sort().join(",");
}

export type ParsedProbeList = { ok: true; paths: Map<string, VirtualProbe> } | { ok: false; message: string };

/** --app-probes back into path → probe; every entry must be a virtual path. */
export function parseProbeList(list: string): ParsedProbeList {
  const paths = new Map<string, VirtualProbe>();
  for (const raw of list.split(",").map((s) => s.trim()).filter(Boolean)) {
    const path = raw.replaceAll("%2C", ",");
    const probe = parseVirtualPath(path);
    if (!probe) return { ok: false, message: `${JSON.stringify(raw)} is not a probe path (/<port>/<path>, /https/<port>/<path>, /tcp/<port>, /grpc/<port>[/<service>])` };
    paths.set(virtualPath(probe), probe);
  }
  return { ok: true, paths };
}
