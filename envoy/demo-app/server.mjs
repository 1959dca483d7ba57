// The demo upstream app: echoes what it received as JSON (?delay=<ms> holds the reply); listens on 127.0.0.1:8081
// (HOST, PORT; PORT=0 picks a free port) and prints the address it listens on as a JSON line.
import { createServer } from "node:http";
import { hostname } from "node:os";

const port = Number(process.env.PORT ?? 8081);
const host = process.env.HOST ?? "127.0.0.1";

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://app");
  const delayMs = Math.min(Number(url.searchParams.get("delay") ?? 0) || 0, 30_000);
  setTimeout(() => {
    const body = JSON.stringify({ host: hostname(), method: req.method, path: url.pathname, headers: req.headers });
    res.writeHead(200, { "content-type": "application/json", "cache-control": "no-cache" });
    res.end(body + "\n");
  }, delayMs);
});
server.on("error", (err) => {
  console.error(`demo app: ${err.message}`);
  process.exit(1);
});
server.listen(port, host, () => console.log(JSON.stringify({ msg: "demo app listening", host, port: server.address().port })));
