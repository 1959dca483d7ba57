// The sidecar's probe port against real app servers on loopback: HTTP and HTTPS probes are forwarded
// (status, body, headers; no redirect Location), TCP probes connect, gRPC probes run the health check
// against a real gRPC server; a path that is not a declared probe, or another method, is 404 and
// reaches nothing; an app that does not answer is a 503 within the timeout.
import test, { type ExecutionContext } from "ava";
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { createServer as createTcpServer, type AddressInfo } from "node:net";
import { Registry } from "prom-client";
import { createLogger } from "../../extproc/log.js";
import { startProbeServer, type ProbeServer } from "../../extproc/probes/server.js";
import { parseProbeList } from "../../extproc/probes/virtual-path.js";
import { HealthService } from "../../extproc/transport/health.js";
import { TransportMetrics } from "../../extproc/transport/metrics.js";
import { ExtProcServer } from "../../extproc/transport/server.js";
import { ALLOW_ALL } from "../../extproc/decision.js";
import { makeCert, opensslUnavailable } from "../helpers/tls-cert.js";

const log = createLogger("silent");

function listen(server: Server | ReturnType<typeof createTcpServer>): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
}

async function probeServer(t: ExecutionContext, paths: string[], registry?: Registry, upstreamTimeoutMs?: number): Promise<ProbeServer> {
  const list = parseProbeList(paths.join(","));
  if (!list.ok) throw new Error(list.message);
  const s = await startProbeServer("127.0.0.1:0", { probes: list.paths, appHost: "127.0.0.1", log, ...(registry ? { registry } : {}), ...(upstreamTimeoutMs ? { upstreamTimeoutMs } : {}) });
  t.teardown(() => s.close());
  return s;
}

async function get(s: ProbeServer, path: string, init: RequestInit = {}) {
  const r = await fetch(`http://${s.address}${path}`, { redirect: "manual", ...init });
  return { status: r.status, body: await r.text(), headers: r.headers };
}

test("probes › HTTP: forwarded to the app's port and path; status, body and the probe's headers pass; Location does not", async (t) => {
  // given an app answering /ready?full=1 with 200 and /moved with a redirect
  const seen: { url?: string; headers: IncomingHttpHeaders }[] = [];
  const app = createHttpServer((req, res) => {
    seen.push({ url: req.url, headers: req.headers });
    if (req.url === "/moved") return void res.writeHead(302, { location: "/elsewhere" }).end();
    res.writeHead(req.url === "/ready?full=1" ? 200 : 500, { "content-type": "text/plain" }).end(`app saw ${req.url}`);
  });
  const port = await listen(app);
  t.teardown(() => app.close());
  const s = await probeServer(t, [`/${port}/ready?full=1`, `/${port}/moved`, `/${port}/broken`]);
  // when kubelet probes the rewritten paths
  const ok = await get(s, `/${port}/ready?full=1`, { headers: { "x-probe": "kubelet", "user-agent": "kube-probe/1.33" } });
  const moved = await get(s, `/${port}/moved`);
  const broken = await get(s, `/${port}/broken`);
  // then each answer is the app's
  t.is(ok.status, 200);
  t.is(ok.body, "app saw /ready?full=1");
  t.is(seen[0]!.headers["x-probe"], "kubelet");
  t.is(seen[0]!.headers["user-agent"], "kube-probe/1.33");
  t.is(seen[0]!.headers.host, `127.0.0.1:${port}`);
  t.is(moved.status, 302);
  t.is(moved.headers.get("location"), null, "kubelet must not follow a redirect to the probe port");
  t.is(broken.status, 500);
});

test("probes › a path that is not a declared probe, or a method kubelet never uses, is 404 and reaches nothing", async (t) => {
  let reached = 0;
  const app = createHttpServer((_req, res) => void (reached++, res.end("secret")));
  const port = await listen(app);
  t.teardown(() => app.close());
  const s = await probeServer(t, [`/${port}/healthz`]);
  for (const path of [`/${port}/admin`, `/${port}/healthz/../admin`, `/${port}`, "/", `/tcp/${port}`, `/grpc/${port}`]) {
    t.is((await get(s, path)).status, 404, path);
  }
  t.is((await get(s, `/${port}/healthz`, { method: "POST", body: "x" })).status, 404, "POST");
  t.is(reached, 0, "the app was never reached");
  t.is((await get(s, `/${port}/healthz`)).status, 200);
  t.is(reached, 1);
});

test("probes › HTTPS: forwarded over TLS without verifying the app's certificate, as kubelet does", async (t) => {
  const missing = opensslUnavailable();
  if (missing) {
    t.log(`skipped: ${missing}`);
    t.pass();
    return;
  }
  const cert = makeCert("app.internal");
  const app = createHttpsServer({ cert: cert.cert, key: cert.key }, (req, res) => void res.end(`tls ${req.url}`));
  const port = await listen(app as unknown as Server);
  t.teardown(() => app.close());
  const s = await probeServer(t, [`/https/${port}/healthz`]);
  t.like(await get(s, `/https/${port}/healthz`), { status: 200, body: "tls /healthz" });
});

test("probes › TCP: 200 when the app's port accepts, 503 when nothing listens", async (t) => {
  const tcp = createTcpServer((socket) => socket.destroy());
  const open = await listen(tcp);
  const closedServer = createTcpServer();
  const closed = await listen(closedServer);
  await new Promise((r) => closedServer.close(r));
  t.teardown(() => tcp.close());
  const s = await probeServer(t, [`/tcp/${open}`, `/tcp/${closed}`]);
  t.is((await get(s, `/tcp/${open}`)).status, 200);
  const refused = await get(s, `/tcp/${closed}`);
  t.is(refused.status, 503);
  t.regex(refused.body, /ECONNREFUSED/);
});

test("probes › gRPC: the health check against a real gRPC server follows its serving status, per service", async (t) => {
  // given the sidecar's own gRPC server (grpc.health.v1 for "" and the ext_proc service), serving
  const health = new HealthService();
  health.setServing(true);
  const grpc = new ExtProcServer({ decider: () => ALLOW_ALL, settings: { messageTimeoutMs: 200, maxMessageTimeoutMs: 0, explainHeader: false }, metrics: new TransportMetrics(new Registry()), log }, health, 0);
  const address = await grpc.bind("127.0.0.1:0");
  t.teardown(() => grpc.shutdown(0));
  const port = Number(address.split(":").pop());
  const registry = new Registry();
  const s = await probeServer(t, [`/grpc/${port}`, `/grpc/${port}/envoy.service.ext_proc.v3.ExternalProcessor`, `/grpc/${port}/no.such.Service`], registry);
  // when probed; then SERVING is 200, an unknown service and NOT_SERVING are 503
  t.like(await get(s, `/grpc/${port}`), { status: 200, body: "SERVING\n" });
  t.is((await get(s, `/grpc/${port}/envoy.service.ext_proc.v3.ExternalProcessor`)).status, 200);
  const unknown = await get(s, `/grpc/${port}/no.such.Service`);
  t.is(unknown.status, 503, unknown.body);
  health.setServing(false);
  t.is((await get(s, `/grpc/${port}`)).status, 503);
  const metrics = await registry.getSingleMetricAsString("meshext_probe_requests_total");
  t.regex(metrics, /meshext_probe_requests_total\{kind="grpc",result="success"\} 2/);
  t.regex(metrics, /meshext_probe_requests_total\{kind="grpc",result="failure"\} 2/);
});

test("probes › an app that accepts but never answers is a 503 once the upstream timeout passes", async (t) => {
  const app = createHttpServer(() => {}); // never responds
  const port = await listen(app);
  t.teardown(() => app.closeAllConnections() ?? app.close());
  const s = await probeServer(t, [`/${port}/slow`], undefined, 300);
  const started = Date.now();
  const r = await get(s, `/${port}/slow`);
  t.is(r.status, 503);
  t.true(Date.now() - started < 3000, `answered after ${Date.now() - started} ms`);
});
