// A stand-in Envoy process for the kubelet-style tests: an inbound HTTP proxy to the app that counts
// requests in flight, and FakeEnvoyAdmin on 127.0.0.1:<admin> serving that count as
// http.inbound.downstream_rq_active. Like Envoy, it exits at once on SIGTERM and on /quitquitquit.
// Prints one JSON line per admin call, per signal, and on start.
import { createServer, request } from "node:http";
import { FakeEnvoyAdmin } from "../../helpers/fake-envoy-admin.js";

const [inboundPort, appPort, adminPort] = process.argv.slice(2).map(Number) as [number, number, number];
const say = (event: string, extra: Record<string, unknown> = {}) => process.stdout.write(JSON.stringify({ envoy: event, atMs: Date.now(), ...extra }) + "\n");

const admin = await FakeEnvoyAdmin.start(adminPort);
let inflight = 0;
let draining = false;
const seen = admin.calls.length;
setInterval(() => {
  for (const c of admin.calls.splice(seen)) if (c.path !== "/stats") say("admin", { method: c.method, url: c.url });
}, 20);

const proxy = createServer((req, res) => {
  inflight++;
  admin.downstreamRqActive = inflight;
  const done = () => {
    inflight--;
    admin.downstreamRqActive = inflight;
  };
  const upstream = request({ host: "127.0.0.1", port: appPort, path: req.url, method: req.method, headers: req.headers }, (up) => {
    // Envoy's drain state: Connection: close on HTTP/1 responses (after /healthcheck/fail).
    const headers = { ...up.headers, ...(draining ? { connection: "close" } : {}) };
    res.writeHead(up.statusCode ?? 502, headers);
    up.pipe(res);
    up.on("end", done);
  });
  upstream.on("error", () => {
    done();
    res.writeHead(503).end("upstream connect error\n");
  });
  req.pipe(upstream);
});
proxy.listen(inboundPort, "0.0.0.0", () => say("started", { inboundPort, adminPort }));
admin.onQuit = () => {
  say("quitquitquit");
  setTimeout(() => process.exit(0), 10);
};
setInterval(() => {
  if (!draining && admin.calls.some((c) => c.path === "/healthcheck/fail")) draining = true;
}, 20);
process.on("SIGTERM", () => {
  say("SIGTERM");
  process.exit(0);
});
