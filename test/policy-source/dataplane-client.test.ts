// The dataplane lifecycle client against the embedded control plane (heartbeats) and a Kuma-like server (none).
import test from "ava";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { silentLogger } from "../../extproc/log.js";
import { loadSidecarConfig } from "../../extproc/config/sidecar.js";
import { createDataplaneClient } from "../../extproc/policy-source/dataplane-client.js";
import { dataplaneIdentity, localDataplane } from "../../extproc/policy-source/from-config.js";
import { call, eventually, startTestControlPlane, tempDir } from "../control-plane/helpers.js";
import { startFakeKuma } from "./fake-kuma.js";

const identity = { mesh: "default", name: "web-1", address: "127.0.0.1", tags: { "kuma.io/service": "web", version: "v1" } };
const DP = "/meshes/default/dataplanes/web-1";

test("dataplane-client › registers online, heartbeats, reports draining, and deregisters so it is gone", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path, { offlineTimeoutMs: 1500 });
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const client = createDataplaneClient({ baseUrl: cp.url, dataplane: identity, heartbeatIntervalMs: 100, log: silentLogger() });
  t.teardown(() => client.stop());
  await client.register();
  const registered = await call(cp.url, "GET", DP);
  t.is(registered.body.status.state, "online");
  t.deepEqual(registered.body.networking.inbound[0].tags, identity.tags);
  await new Promise((r) => setTimeout(r, 2500)); // well past the offline timeout: heartbeats keep it online
  t.is((await call(cp.url, "GET", DP)).body.status.state, "online");
  await client.markDraining();
  t.is((await call(cp.url, "GET", DP)).body.status.state, "draining");
  await client.deregister();
  t.is((await call(cp.url, "GET", DP)).status, 404);
});

test("dataplane-client › registers again when the control plane forgot the dataplane", async (t) => {
  const dir = await tempDir();
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  const client = createDataplaneClient({ baseUrl: cp.url, dataplane: identity, heartbeatIntervalMs: 100, log: silentLogger() });
  t.teardown(() => client.stop());
  await client.register();
  await call(cp.url, "DELETE", DP); // e.g. garbage-collected while the sidecar was partitioned away
  t.true(await eventually(async () => (await call(cp.url, "GET", DP)).status === 200));
});

test("dataplane-client › against Kuma (no heartbeat endpoint) draining is a PUT with every inbound NotReady", async (t) => {
  const kuma = await startFakeKuma();
  t.teardown(() => kuma.close());
  const client = createDataplaneClient({ baseUrl: kuma.url, dataplane: identity, heartbeatIntervalMs: 50, log: silentLogger() });
  t.teardown(() => client.stop());
  await client.register();
  t.true(await eventually(() => kuma.requests.some((r) => r.endsWith("/_heartbeat"))));
  await client.markDraining();
  const dp = kuma.dataplanes.get("default/web-1") as { networking: { inbound: Array<{ state?: string }> } };
  t.is(dp.networking.inbound[0]!.state, "NotReady");
  const heartbeats = kuma.requests.filter((r) => r.endsWith("/_heartbeat")).length;
  await new Promise((r) => setTimeout(r, 300));
  t.is(kuma.requests.filter((r) => r.endsWith("/_heartbeat")).length, heartbeats, "heartbeats stopped");
  await client.deregister();
  t.false(kuma.dataplanes.has("default/web-1"));
});

test("dataplane-client › the registered tags are the --dataplane-tags the engine reads; a pair without = is refused", (t) => {
  const config = (tags: string) => loadSidecarConfig(["--dataplane-name", "web-1", "--dataplane-tags", tags], {}).config;
  const ok = config("kuma.io/service=web, version=v1");
  t.deepEqual(dataplaneIdentity(ok, localDataplane(ok)).tags, { "kuma.io/service": "web", version: "v1" });
  const bad = config("kuma.io/service=web,oops");
  t.throws(() => localDataplane(bad), { message: /not key=value/ });
});

/** A control plane stand-in that records every request (method, path, headers, body) and answers from `answer`. */
async function recordingServer(t: import("ava").ExecutionContext, answer: (method: string, path: string) => number) {
  const seen: Array<{ method: string; path: string; headers: Record<string, string | string[] | undefined>; body: string }> = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ method: req.method!, path: req.url!, headers: req.headers, body });
      const status = answer(req.method!, req.url!);
      res.writeHead(status, { "content-type": "application/json" }).end(status === 500 ? "boom" : "{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** A logger that keeps every line it writes, parsed. */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: "info" }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { log, lines, messages: () => lines.map((l) => l.msg) };
}

test("dataplane-client › given a token, when it registers and deregisters, then each request carries it, bodies are JSON, and the log names the dataplane", async (t) => {
  const cp = await recordingServer(t, (method) => (method === "DELETE" ? 404 : 200));
  const c = capturingLogger();
  const client = createDataplaneClient({ baseUrl: cp.url, token: "s3cret", dataplane: identity, heartbeatIntervalMs: 60_000, log: c.log });
  t.teardown(() => client.stop());
  await client.register();
  await client.deregister();
  t.deepEqual(cp.seen.map((r) => `${r.method} ${r.path}`), [`PUT ${DP}`, `DELETE ${DP}`]);
  for (const r of cp.seen) {
    t.is(r.headers.authorization, "Bearer s3cret");
    t.is(r.headers.accept, "application/json");
  }
  t.is(cp.seen[0]!.headers["content-type"], "application/json");
  t.like(JSON.parse(cp.seen[0]!.body), { type: "Dataplane", mesh: "default", name: "web-1" });
  t.is(cp.seen[1]!.headers["content-type"], undefined, "a DELETE has no body");
  t.is(cp.seen[1]!.body, "");
  t.deepEqual(c.messages(), ["dataplane registered", "dataplane deregistered"]);
  t.like(c.lines[0], { component: "dataplane-client", dataplane: "default/web-1", controlPlane: cp.url });
  t.like(c.lines[1], { existed: false }, "the DELETE found nothing: a 404 is not an error");
});

test("dataplane-client › given no token, then no authorization header; given a failing DELETE, then deregister rejects with the status", async (t) => {
  const cp = await recordingServer(t, (method) => (method === "DELETE" ? 500 : 200));
  const client = createDataplaneClient({ baseUrl: cp.url, dataplane: identity, heartbeatIntervalMs: 60_000, log: silentLogger() });
  t.teardown(() => client.stop());
  await client.register();
  await t.throwsAsync(client.deregister(), { message: `DELETE ${DP}: 500 boom` });
  t.is(cp.seen[0]!.headers.authorization, undefined);
});

test("dataplane-client › given Kuma found to have no heartbeat endpoint, when it drains, then one PUT with NotReady inbounds and no heartbeat is sent", async (t) => {
  const kuma = await startFakeKuma();
  t.teardown(() => kuma.close());
  const c = capturingLogger();
  const client = createDataplaneClient({ baseUrl: kuma.url, dataplane: identity, heartbeatIntervalMs: 20, log: c.log });
  t.teardown(() => client.stop());
  await client.register();
  t.true(await eventually(() => c.messages().includes("control plane has no heartbeat endpoint (Kuma?); liveness is left to it")));
  const before = kuma.requests.length;
  await client.markDraining();
  t.deepEqual(kuma.requests.slice(before), [`PUT ${DP}`], "known to have none: straight to the PUT");
  t.is((kuma.dataplanes.get("default/web-1") as { networking: { inbound: Array<{ state?: string }> } }).networking.inbound[0]!.state, "NotReady");
  t.is(c.messages().at(-1), "dataplane reported draining");
  await client.deregister();
  t.like(c.lines.at(-1), { msg: "dataplane deregistered", existed: true });
});

test("dataplane-client › given a draining dataplane the control plane forgot, when the heartbeat finds out, then it registers it again as NotReady and says so", async (t) => {
  let known = true;
  const cp = await recordingServer(t, (method, path) => {
    if (method === "PUT") return (known = true), 200;
    if (path.endsWith("/_heartbeat")) return known ? 200 : 404;
    if (method === "GET") return known ? 200 : 404;
    return 200;
  });
  const c = capturingLogger();
  const client = createDataplaneClient({ baseUrl: cp.url, dataplane: identity, heartbeatIntervalMs: 20, log: c.log });
  t.teardown(() => client.stop());
  await client.register();
  await client.markDraining();
  known = false;
  const from = cp.seen.length;
  t.true(await eventually(() => cp.seen.slice(from).some((r) => r.method === "PUT")));
  const put = cp.seen.slice(from).find((r) => r.method === "PUT")!;
  t.deepEqual(JSON.parse(put.body).networking.inbound[0].state, "NotReady");
  t.true(c.messages().includes("control plane does not know this dataplane; registering again"));
  // and once deregistered, heartbeats stop and nothing registers it again
  await client.deregister();
  known = false;
  const after = cp.seen.length;
  await client.register();
  t.deepEqual(cp.seen.slice(after), [], "register() after deregister() sends nothing");
});

test("dataplane client › given labels on the identity, then the registered resource carries them; given none, then it has no labels field", (t) => {
  const labelled = createDataplaneClient({ baseUrl: "http://127.0.0.1:9", dataplane: { ...identity, labels: { team: "shop" } }, heartbeatIntervalMs: 1000, log: silentLogger() });
  t.deepEqual(labelled.resource().labels, { team: "shop" });
  const bare = createDataplaneClient({ baseUrl: "http://127.0.0.1:9", dataplane: identity, heartbeatIntervalMs: 1000, log: silentLogger() }).resource();
  t.false("labels" in bare);
  t.deepEqual(bare.networking, { address: "127.0.0.1", inbound: [{ port: (bare.networking as { inbound: Array<{ port: number }> }).inbound[0]!.port, tags: identity.tags }] });
});
