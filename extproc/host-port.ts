// "host:port" split for listening: the host without IPv6 brackets, the port as a number. The flag parser
// (config/flags.ts, type "hostport") has checked the shape; this only takes it apart.

export function splitHostPort(hostPort: string): { host: string; port: number } {
  const colon = hostPort.lastIndexOf(":");
  return { host: hostPort.slice(0, colon).replace(/^\[|\]$/g, ""), port: Number(hostPort.slice(colon + 1)) };
}
