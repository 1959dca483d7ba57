// The app of the kubelet-style tests: answers every request after --delay ms; on SIGTERM it keeps
// serving for --linger ms (a graceful app finishing its work), then exits 0. Prints JSON lines.
import { createServer } from "node:http";

const [port, delayMs, lingerMs] = process.argv.slice(2, 5).map(Number) as [number, number, number];
/** Optional 4th argument: the address to bind (default loopback). */
const host = process.argv[5] ?? "127.0.0.1";
const say = (event: string, extra: Record<string, unknown> = {}) => process.stdout.write(JSON.stringify({ app: event, atMs: Date.now(), ...extra }) + "\n");
let served = 0;
const server = createServer((_req, res) => {
  setTimeout(() => {
    served++;
    res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
  }, delayMs);
});
server.listen(port, host, () => say("started"));
process.on("SIGTERM", () => {
  say("SIGTERM");
  setTimeout(() => {
    say("exit", { served });
    process.exit(0);
  }, lingerMs);
});
