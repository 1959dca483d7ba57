// Keeps requests flowing for the kubelet-style tests: N loops, each sending one request after the
// other (a new connection each time, as clients picking an endpoint do) to the URL, printing one JSON
// line per outcome, until SIGTERM.
import { request } from "node:http";

const [url, concurrencyText] = process.argv.slice(2) as [string, string];
const concurrency = Number(concurrencyText) || 4;
let stopping = false;

function once(): Promise<void> {
  return new Promise((resolve) => {
    const startedMs = Date.now();
    const req = request(url, { agent: false, timeout: 5000 }, (res) => {
      res.resume();
      res.on("end", () => {
        process.stdout.write(JSON.stringify({ load: "response", status: res.statusCode, startedMs, atMs: Date.now() }) + "\n");
        resolve();
      });
    });
    req.on("error", (err: Error & { code?: string }) => {
      process.stdout.write(JSON.stringify({ load: "error", error: err.code ?? err.message, startedMs, atMs: Date.now() }) + "\n");
      setTimeout(resolve, 20);
    });
    req.end();
  });
}

async function loop(): Promise<void> {
  while (!stopping) await once();
}
process.on("SIGTERM", () => (stopping = true));
await Promise.all(Array.from({ length: concurrency }, loop));
process.exit(0);
