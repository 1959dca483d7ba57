// The app of the kubelet-style tests: answers every request after --delay ms; on SIGTERM it keeps
// serving for --linger ms (a graceful app finishing its work), then exits 0. Prints JSON lines.
// With "hold" after the address it also waits for a SIGUSR1 (a test's "checked while you were up") before it exits.
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
let released = process.argv[6] !== "hold";
let lingered = false;
const exitWhenDone = () => {
  if (!released || !lingered) return;
  say("exit", { served });
  process.exit(0);
};
process.on("SIGUSR1", () => {
  released = true;
  exitWhenDone();
});
process.on("SIGTERM", () => {
  say("SIGTERM");
  setTimeout(() => {
    lingered = true;
    exitWhenDone();
  }, lingerMs);
});
