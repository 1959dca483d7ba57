// A child process of bench/control-plane-scale.ts that only times the control plane: every simulated
// sidecar's heartbeat once per interval (spread evenly) and unrelated GETs at a fixed rate. It holds no
// long-poll and reads no woken page, so its latencies are the control plane's, not the load generator's.
import { Agent } from "node:http";
import { pathToFileURL } from "node:url";
import { type ChildArgs, type FromChild, type Reply, send, type ToChild } from "./cp-scale-http.js";

function main(args: ChildArgs): void {
  const base = new URL(args.baseUrl);
  // Idle keep-alive sockets are dropped before the control plane's 5 s keepAliveTimeout closes them, so no
  // request is sent on a socket the server is closing (that race shows up as resets and retries, not as its cost).
  const agent = new Agent({ keepAlive: true, maxSockets: 64, timeout: 4000 });
  const tell = (m: FromChild) => process.send!(m);
  let measuring = false;
  let heartbeatMs: number[] = [];
  let getMs: number[] = [];
  let errors = 0; // over the whole run, warm-up included
  const timed = async (into: () => number[], f: () => Promise<Reply>) => {
    const t0 = performance.now();
    const r = await f().catch(() => undefined);
    if (!r || r.status !== 200) errors++;
    else if (measuring) into().push(performance.now() - t0);
  };
  const heartbeatGapMs = args.heartbeatIntervalMs / Math.max(1, args.totalSidecars);
  let next = 0;
  const timers = [
    setInterval(() => void timed(() => heartbeatMs, () => send(agent, base, "POST", `/meshes/default/dataplanes/dp-${next++ % args.totalSidecars}/_heartbeat`, {}, "{}")), Math.max(1, heartbeatGapMs)),
    setInterval(() => void timed(() => getMs, () => send(agent, base, "GET", `/meshes/default/meshtrafficpermissions?size=100&offset=${100 * Math.floor(Math.random() * 5)}`)), 1000 / args.getsPerSecond),
  ];
  process.on("message", (m: ToChild) => {
    if (m.type === "measure") {
      heartbeatMs = [];
      getMs = [];
      measuring = true;
    } else if (m.type === "report") {
      measuring = false;
      tell({ type: "result", heartbeatMs, getMs, errors });
    } else if (m.type === "quit") {
      for (const t of timers) clearInterval(t);
      agent.destroy();
      process.exit(0);
    }
  });
  tell({ type: "ready" });
}

if (process.send && import.meta.url === pathToFileURL(process.argv[1] ?? "").href) main(JSON.parse(process.argv[2]!) as ChildArgs);
