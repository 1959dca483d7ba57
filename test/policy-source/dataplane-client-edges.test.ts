// The dataplane client's edges, against a scripted control plane: failed registrations and heartbeats, stop(), 405s, and deregister() racing a heartbeat.
import test, { type ExecutionContext } from "ava";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { createDataplaneClient } from "../../extproc/policy-source/dataplane-client.js";
import { eventually } from "../control-plane/helpers.js";

const identity = (name = "web-1") => ({ mesh: "default", name, address: "127.0.0.1", tags: { "kuma.io/service": "web" } });
const DP = "/meshes/default/dataplanes/web-1";

interface Seen { method: string; path: string; body: string }
type Answer = { status: number; body?: string } | Promise<{ status: number; body?: string }>;

/** A control plane stand-in that records each request ("METHOD path") and answers from `answer` (200 "{}" when it returns undefined). */
async function scriptedServer(t: ExecutionContext, answer: (req: Seen, raw: IncomingMessage) => Answer | undefined = () => undefined) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", async () => {
      const r: Seen = { method: req.method!, path: req.url!, body };
      seen.push(r);
      const a = (await answer(r, req)) ?? { status: 200 };
      res.writeHead(a.status, { "content-type": "application/json" }).end(a.body ?? "{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const requests = (from = 0) => seen.slice(from).map((r) => `${r.method} ${r.path}`);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, requests };
}

/** A logger that keeps every line it writes, parsed. */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: "info" }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { log, lines, line: (msg: string) => lines.find((l) => l.msg === msg) };
}

function client(t: ExecutionContext, url: string, log = capturingLogger().log, heartbeatIntervalMs = 60_000, name = "web-1") {
  const c = createDataplaneClient({ baseUrl: url, dataplane: identity(name), heartbeatIntervalMs, log });
  t.teardown(() => c.stop());
  return c;
}

const heartbeatsOf = (seen: Seen[], name: string) => seen.filter((r) => r.path === `/meshes/default/dataplanes/${name}/_heartbeat`).length;

test("dataplane client edges › given a control plane refusing the registration, when it registers, then it resolves and warns with the error", async (t) => {
  const cp = await scriptedServer(t, (r) => (r.method === "PUT" ? { status: 500, body: "boom" } : undefined));
  const c = capturingLogger();
  await client(t, cp.url, c.log).register();
  t.like(c.line("could not register the dataplane yet; heartbeats will retry"), { level: 40, err: `PUT ${DP}: 500 boom` });
  t.is(c.line("dataplane registered"), undefined);
});

test("dataplane client edges › given a control plane with heartbeats, when it drains, then the draining state goes in a heartbeat, not in a PUT", async (t) => {
  const cp = await scriptedServer(t);
  const dp = client(t, cp.url);
  await dp.register();
  await dp.markDraining();
  t.deepEqual(cp.requests(), [`PUT ${DP}`, `POST ${DP}/_heartbeat`]);
  t.deepEqual(JSON.parse(cp.seen[1]!.body), { state: "draining" });
});

test("dataplane client edges › given a client stopped right after registering, when another client heartbeats three times, then the stopped one sent none", async (t) => {
  const cp = await scriptedServer(t);
  const stopped = client(t, cp.url, undefined, 20, "web-1");
  await stopped.register();
  stopped.stop();
  await client(t, cp.url, undefined, 20, "web-2").register();
  t.true(await eventually(() => heartbeatsOf(cp.seen, "web-2") >= 3, 5000));
  t.is(heartbeatsOf(cp.seen, "web-1"), 0);
});

test("dataplane client edges › given heartbeats answered 500, then each failure is warned with the error and heartbeats go on", async (t) => {
  const cp = await scriptedServer(t, (r) => (r.path.endsWith("/_heartbeat") ? { status: 500, body: "boom" } : undefined));
  const c = capturingLogger();
  await client(t, cp.url, c.log, 20).register();
  t.true(await eventually(() => heartbeatsOf(cp.seen, "web-1") >= 2, 5000));
  t.like(c.line("heartbeat failed; will retry"), { level: 40, err: `POST ${DP}/_heartbeat: 500 boom` });
});

test("dataplane client edges › given a deregistered dataplane, when it is marked draining, then nothing is sent (no heartbeat, no PUT)", async (t) => {
  for (const heartbeat of [200, 404]) {
    // 404 with the dataplane known: a Kuma without a heartbeat endpoint, found out by the first drain
    const cp = await scriptedServer(t, (r) => (r.path.endsWith("/_heartbeat") ? { status: heartbeat } : undefined));
    const dp = client(t, cp.url);
    await dp.register();
    if (heartbeat === 404) await dp.markDraining();
    const from = cp.seen.length;
    await dp.deregister();
    await dp.markDraining();
    t.deepEqual(cp.requests(from), [`DELETE ${DP}`], `heartbeat answered ${heartbeat}`);
  }
});

test("dataplane client edges › given a heartbeat answered 405, then it stops heartbeating without asking for or re-registering the dataplane", async (t) => {
  const cp = await scriptedServer(t, (r) => (r.path.endsWith("/_heartbeat") ? { status: 405 } : r.method === "GET" ? { status: 404 } : undefined));
  const c = capturingLogger();
  const dp = client(t, cp.url, c.log, 20);
  await dp.register();
  t.true(await eventually(() => c.line("control plane has no heartbeat endpoint (Kuma?); liveness is left to it") !== undefined, 3000));
  await dp.deregister();
  t.deepEqual(cp.requests(), [`PUT ${DP}`, `POST ${DP}/_heartbeat`, `DELETE ${DP}`]);
});

test("dataplane client edges › given an online dataplane on a control plane without heartbeats, when that is found out, then it is not re-PUT as NotReady", async (t) => {
  // Kuma: 404 on the heartbeat, the dataplane itself found
  const cp = await scriptedServer(t, (r) => (r.path.endsWith("/_heartbeat") ? { status: 404 } : undefined));
  const c = capturingLogger();
  const dp = client(t, cp.url, c.log, 20);
  await dp.register();
  t.true(await eventually(() => c.line("control plane has no heartbeat endpoint (Kuma?); liveness is left to it") !== undefined, 3000));
  await dp.deregister(); // waits for any PUT in flight
  t.deepEqual(cp.requests(), [`PUT ${DP}`, `POST ${DP}/_heartbeat`, `GET ${DP}`, `DELETE ${DP}`]);
});

test("dataplane client edges › given an online dataplane the control plane forgot, when a heartbeat finds out, then it is registered again without NotReady", async (t) => {
  let known = true;
  const cp = await scriptedServer(t, (r) => {
    if (r.method === "PUT") known = true;
    else if (!known) return { status: 404 };
    return undefined;
  });
  const dp = client(t, cp.url, undefined, 20);
  await dp.register();
  known = false;
  t.true(await eventually(() => cp.seen.filter((r) => r.method === "PUT").length === 2, 5000));
  const again = JSON.parse(cp.seen.filter((r) => r.method === "PUT")[1]!.body) as { networking: { inbound: Array<Record<string, unknown>> } };
  t.false("state" in again.networking.inbound[0]!);
});

test("dataplane client edges › given deregister() while a drain's heartbeat is checking whether the dataplane exists, then it is not registered again", async (t) => {
  let deregistered: Promise<void> | undefined;
  let dp: ReturnType<typeof client> | undefined;
  const cp = await scriptedServer(t, (r) => {
    if (r.path.endsWith("/_heartbeat")) return { status: 404 };
    if (r.method !== "GET") return undefined;
    deregistered = dp!.deregister(); // the GET is answered (404: unknown) after deregister() began
    return { status: 404 };
  });
  dp = client(t, cp.url);
  await dp.register();
  await dp.markDraining();
  await deregistered;
  t.deepEqual(cp.requests().filter((r) => r.startsWith("PUT")), [`PUT ${DP}`], "only the first registration");
  t.true(cp.requests().includes(`DELETE ${DP}`));
});

test("dataplane client edges › given a failing answer with a long body, then the error quotes its first 500 characters", async (t) => {
  const long = "x".repeat(2000);
  const cp = await scriptedServer(t, (r) => (r.method === "DELETE" ? { status: 500, body: long } : undefined));
  const dp = client(t, cp.url);
  await dp.register();
  await t.throwsAsync(dp.deregister(), { message: `DELETE ${DP}: 500 ${"x".repeat(500)}` });
});
