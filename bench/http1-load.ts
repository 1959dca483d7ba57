// A bounded HTTP/1.1 keep-alive load: `inFlight` connections, each sending its next request as soon as the last
// answered, until `requests` were sent. Counts statuses (0 = a connection or protocol error).
import { Agent, request } from "node:http";

export interface Http1LoadResult {
  requests: number;
  statuses: Map<number, number>;
  failed: number;
  elapsedMs: number;
}

export async function http1Load(url: string, requests: number, inFlight: number): Promise<Http1LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: inFlight });
  const statuses = new Map<number, number>();
  let sent = 0;
  const once = () =>
    new Promise<number>((resolve) => {
      const req = request(url, { agent }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", () => resolve(0));
      });
      req.on("error", () => resolve(0));
      req.end();
    });
  const started = Date.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (sent < requests) {
        sent++;
        const status = await once();
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  agent.destroy();
  const ok = statuses.get(200) ?? 0;
  return { requests, statuses, failed: requests - ok, elapsedMs: Date.now() - started };
}
