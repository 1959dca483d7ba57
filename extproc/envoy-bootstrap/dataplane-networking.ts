// What Envoy needs from a Kuma Dataplane (universal YAML): each inbound's port, the app's address and port behind it,
// and each outbound's port and service. Pure: the parsed document in, the listeners or every violation out.
import type { Violation } from "../policy/types.js";

export interface NetworkingInbound {
  /** The inbound's `name`, else its port as text (what Kuma 2.12+ sectionName matches). */
  name: string;
  port: number;
  servicePort: number;
  serviceAddress: string;
}

export interface NetworkingOutbound {
  service: string;
  port: number;
  /** Kuma's outbound `address` (default 127.0.0.1). */
  address: string;
}

export interface DataplaneNetworking {
  inbounds: NetworkingInbound[];
  outbounds: NetworkingOutbound[];
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const isPort = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535;

/** Reads networking.inbound[] and networking.outbound[]: servicePort defaults to port, serviceAddress to appHost. */
export function dataplaneNetworking(doc: unknown, appHost: string): { networking: DataplaneNetworking } | { violations: Violation[] } {
  const violations: Violation[] = [];
  const bad = (field: string, message: string): void => void violations.push({ field, message });
  const net = isObj(doc) ? doc.networking : undefined;
  if (!isObj(net)) return { violations: [{ field: "networking", message: "must be defined" }] };
  const inbounds: NetworkingInbound[] = [];
  const rawInbounds = Array.isArray(net.inbound) ? net.inbound : [];
  if (rawInbounds.length === 0) bad("networking.inbound", "must have at least one element (Envoy needs a port to listen on)");
  rawInbounds.forEach((ib: unknown, i) => {
    const at = `networking.inbound[${i}]`;
    if (!isObj(ib)) return bad(at, "must be an object");
    if (!isPort(ib.port)) return bad(`${at}.port`, "must be a port from 1 to 65535");
    const servicePort = ib.servicePort ?? ib.port;
    if (!isPort(servicePort)) return bad(`${at}.servicePort`, "must be a port from 1 to 65535");
    if (ib.serviceAddress !== undefined && typeof ib.serviceAddress !== "string") return bad(`${at}.serviceAddress`, "must be a string");
    const name = typeof ib.name === "string" && ib.name !== "" ? ib.name : String(ib.port);
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) return bad(`${at}.name`, "must be letters, digits, '_', '.' or '-' (it names Envoy listeners)");
    if (inbounds.some((other) => other.port === ib.port)) return bad(`${at}.port`, `port ${ib.port} is used by another inbound`);
    inbounds.push({ name, port: ib.port, servicePort, serviceAddress: (ib.serviceAddress as string | undefined) || appHost });
    return undefined;
  });
  const outbounds: NetworkingOutbound[] = [];
  (Array.isArray(net.outbound) ? net.outbound : []).forEach((ob: unknown, i) => {
    const at = `networking.outbound[${i}]`;
    if (!isObj(ob)) return bad(at, "must be an object");
    if (!isPort(ob.port)) return bad(`${at}.port`, "must be a port from 1 to 65535");
    const tags = isObj(ob.tags) ? ob.tags : {};
    const ref = isObj(ob.backendRef) ? ob.backendRef : {};
    const service = tags["kuma.io/service"] ?? ref.name;
    if (typeof service !== "string" || !/^[A-Za-z0-9_.-]+$/.test(service)) return bad(`${at}.tags["kuma.io/service"]`, "must name the destination service (letters, digits, '_', '.', '-')");
    outbounds.push({ service, port: ob.port, address: typeof ob.address === "string" ? ob.address : "127.0.0.1" });
    return undefined;
  });
  return violations.length > 0 ? { violations } : { networking: { inbounds, outbounds } };
}
