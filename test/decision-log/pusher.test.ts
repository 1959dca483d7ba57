// The decision-sample pusher (extproc/decision-log/push.ts) in process against a stand-in control plane on loopback:
// which records the reservoir keeps, their order, the POST's path, headers and body sizes, the counters per answer,
// the once-a-minute warning, and the interval timer.
import test, { type ExecutionContext } from "ava";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { Registry } from "prom-client";
import { PushMetrics } from "../../extproc/decision-log/metrics.js";
import { DecisionSamplePusher, type PushOptions } from "../../extproc/decision-log/push.js";
import { createLogger, silentLogger } from "../../extproc/log.js";
import { freePort } from "../helpers/prometheus.js";

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A control plane stand-in answering every POST with `answer()` (status and body; a promise: 202 once it settles); what it got is in `received`. */
async function standIn(t: ExecutionContext, answer: () => { status: number; body?: string } | Promise<void> = () => ({ status: 202 })): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (c: string) => (body += c));
    req.on("end", () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const a = answer();
      if (a instanceof Promise) return void a.then(() => res.writeHead(202, { "content-type": "application/json" }).end("{}"));
      res.writeHead(a.status, { "content-type": "application/json" }).end(a.body ?? "{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** The pusher's counters as { pushed, sampled_out, too_large, refused, send_error }. */
async function counts(registry: Registry): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const v of (await registry.getSingleMetric("meshext_decision_log_pushed_total")!.get()).values) out.pushed = v.value;
  for (const v of (await registry.getSingleMetric("meshext_decision_log_push_dropped_total")!.get()).values) out[String(v.labels.reason)] = v.value;
  return out;
}

/** A logger whose JSON lines land in `lines`. */
function capturedLog(): { log: ReturnType<typeof createLogger>; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({ write(chunk, _enc, done) { for (const l of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(l)); done(); } });
  return { log: createLogger("info", sink), lines };
}

function pusher(baseUrl: string, over: Partial<PushOptions> = {}): { p: DecisionSamplePusher; registry: Registry } {
  const registry = new Registry();
  const p = new DecisionSamplePusher({
    baseUrl, token: "", maxRecords: 3, intervalMs: 60_000, batchBytes: 64 * 1024,
    dataplane: () => ({ mesh: "default", name: "backend-1" }), metrics: new PushMetrics(registry), log: silentLogger(), ...over,
  });
  return { p, registry };
}

/** Offers `line` like the recorder does: asks for a slot, fills it when there is one; returns the slot. */
const offer = (p: DecisionSamplePusher, line: string): number => {
  const slot = p.slot();
  if (slot >= 0) p.fill(slot, line);
  return slot;
};

const rec = (n: number | string) => `{"n":${JSON.stringify(n)}}`;
const sentRecords = (received: Received[]) => received.flatMap((r) => (JSON.parse(r.body) as { records: Array<{ n: unknown }> }).records.map((x) => x.n));

test("pusher › given room in the sample, when records are offered, then each gets the next slot and none is counted sampled_out", async (t) => {
  const cp = await standIn(t);
  const { p, registry } = pusher(cp.url, { random: () => 0.99 });
  // When three records are offered to a sample of three
  t.deepEqual([offer(p, rec(0)), offer(p, rec(1)), offer(p, rec(2))], [0, 1, 2]);
  await p.send();
  // Then all three are sent in one POST, oldest first, and nothing was sampled out
  t.deepEqual(sentRecords(cp.received), [0, 1, 2]);
  t.like(await counts(registry), { pushed: 3, sampled_out: 0 });
});

test("pusher › given a full sample, when a record draws a slot inside it, then it replaces that record, and the sent ones stay in decision order", async (t) => {
  const cp = await standIn(t);
  // Given a full sample of three and a random source that picks floor(0.5 × 4) = slot 2 for the fourth record
  const { p, registry } = pusher(cp.url, { random: () => 0.5 });
  for (let i = 0; i < 3; i++) offer(p, rec(i));
  // When the fourth is offered
  t.is(offer(p, rec(3)), 2);
  await p.send();
  // Then record 2 gave way to record 3, one record is counted sampled_out, and the POST has three records
  t.deepEqual(sentRecords(cp.received), [0, 1, 3]);
  t.like(await counts(registry), { pushed: 3, sampled_out: 1 });
});

test("pusher › given a full sample, when a replacement lands in the first slot, then the records are still sent oldest first", async (t) => {
  const cp = await standIn(t);
  const { p } = pusher(cp.url, { random: () => 0 });
  for (let i = 0; i < 4; i++) offer(p, rec(i));
  await p.send();
  // Then slot 0 holds the newest record but it is sent last
  t.deepEqual(sentRecords(cp.received), [1, 2, 3]);
});

test("pusher › given a full sample, when a record draws a slot just past it, then it is not kept and is counted sampled_out", async (t) => {
  const cp = await standIn(t);
  // Given a random source that picks floor(0.75 × 4) = 3, the first slot past a sample of three
  const { p, registry } = pusher(cp.url, { random: () => 0.75 });
  for (let i = 0; i < 3; i++) offer(p, rec(i));
  // When the fourth is offered
  t.is(offer(p, rec(3)), -1);
  await p.send();
  // Then the sample is unchanged
  t.deepEqual(sentRecords(cp.received), [0, 1, 2]);
  t.like(await counts(registry), { pushed: 3, sampled_out: 1 });
});

test("pusher › given a sent interval, when the next one fills, then its reservoir counts only its own records", async (t) => {
  const cp = await standIn(t);
  // Given one interval of five records sent (seen back to 0 after it)
  const { p } = pusher(cp.url, { random: () => 0.5 });
  for (let i = 0; i < 5; i++) offer(p, rec(i));
  await p.send();
  cp.received.length = 0;
  // When the next interval gets four records: the fourth draws floor(0.5 × 4) = 2 (with the old five still counted it would be 4: out)
  for (let i = 10; i < 13; i++) offer(p, rec(i));
  t.is(offer(p, rec(13)), 2);
  await p.send();
  // Then the second POST carries only this interval's records
  t.deepEqual(sentRecords(cp.received), [10, 11, 13]);
});

test("pusher › given nothing sampled, or no dataplane known yet, when send runs, then nothing is posted and the records wait", async (t) => {
  const cp = await standIn(t);
  let dataplane: { mesh: string; name: string } | undefined;
  const { p, registry } = pusher(cp.url, { dataplane: () => dataplane });
  // When send runs with an empty sample, then with records but no dataplane
  await p.send();
  offer(p, rec(0));
  await p.send();
  t.is(cp.received.length, 0);
  // Then once the dataplane is known the waiting record goes out
  dataplane = { mesh: "default", name: "backend-1" };
  await p.send();
  t.deepEqual(sentRecords(cp.received), [0]);
  // and a send after that, with nothing new, posts nothing
  await p.send();
  t.is(cp.received.length, 1);
  t.like(await counts(registry), { pushed: 1 });
});

test("pusher › given a token and a mesh and name that need escaping, when a sample is sent, then it is a JSON POST with a bearer token to the escaped path", async (t) => {
  const cp = await standIn(t);
  const { p } = pusher(cp.url, { token: "s3cr3t", dataplane: () => ({ mesh: "team a", name: "web/1" }) });
  offer(p, rec(0));
  await p.send();
  const [r] = cp.received;
  t.is(r!.method, "POST");
  t.is(r!.url, "/meshes/team%20a/dataplanes/web%2F1/_decision-samples");
  t.is(r!.headers["content-type"], "application/json");
  t.is(r!.headers.accept, "application/json");
  t.is(r!.headers.authorization, "Bearer s3cr3t");
  t.is(r!.body, `{"records":[${rec(0)}]}`);
});

test("pusher › given no token, when a sample is sent, then the POST has no authorization header", async (t) => {
  const cp = await standIn(t);
  const { p } = pusher(cp.url);
  offer(p, rec(0));
  await p.send();
  t.is(cp.received[0]!.headers.authorization, undefined);
});

test("pusher › given a batch size, when the sample is sent, then bodies fill up to exactly that many bytes, never more", async (t) => {
  const cp = await standIn(t);
  // Given records of 10 bytes (`{"n":"aa"}` …, and `{"n":"é"}`: é is two bytes) and room for exactly two a body:
  // `{"records":[` + 2 × 10 + `,` + `]}` = 13 + 2 × 11 bytes
  const { p, registry } = pusher(cp.url, { maxRecords: 10, batchBytes: 13 + 2 * 11 });
  const lines = ["aa", "bb", "cc", "dd", "é"].map(rec);
  t.true(lines.every((l) => Buffer.byteLength(l) === 10));
  for (const l of lines) offer(p, l);
  await p.send();
  // Then three bodies: two, two and one records, the full ones exactly at the limit
  t.deepEqual(cp.received.map((r) => Buffer.byteLength(r.body)), [35, 35, 24]);
  t.deepEqual(sentRecords(cp.received), ["aa", "bb", "cc", "dd", "é"]);
  t.like(await counts(registry), { pushed: 5, too_large: 0 });
});

test("pusher › given a record that alone fills a body to the byte, then it is sent; one byte more and it is dropped as too_large", async (t) => {
  const cp = await standIn(t);
  // Given a body limit of 13 + 11 bytes: a 10-byte record fits it exactly, an 11-byte one does not
  const { p, registry } = pusher(cp.url, { maxRecords: 10, batchBytes: 24 });
  for (const l of [rec("aa"), rec("bbb"), rec("cc")]) offer(p, l);
  await p.send();
  // Then the two 10-byte records go, one a body, and the 11-byte one is counted too_large
  t.deepEqual(cp.received.map((r) => r.body), [`{"records":[${rec("aa")}]}`, `{"records":[${rec("cc")}]}`]);
  t.like(await counts(registry), { pushed: 2, too_large: 1 });
});

test("pusher › given the control plane answers 4xx, then the records are counted refused; 5xx counts them send_error", async (t) => {
  let status = 499;
  const cp = await standIn(t, () => ({ status, body: '{"error":"no"}' }));
  const { p, registry } = pusher(cp.url);
  // When two records meet a 499 and then one a 500
  offer(p, rec(0));
  offer(p, rec(1));
  await p.send();
  status = 500;
  offer(p, rec(2));
  await p.send();
  // Then: two refused, one send_error, none pushed
  t.like(await counts(registry), { pushed: 0, refused: 2, send_error: 1 });
});

test("pusher › given nothing listens at the control plane's address, then the records are counted send_error and the warning says why", async (t) => {
  // Given a control plane URL on a free loopback port nothing listens on
  const url = `http://127.0.0.1:${await freePort()}`;
  const { log, lines } = capturedLog();
  const { p, registry } = pusher(url, { log });
  offer(p, rec(0));
  offer(p, rec(1));
  await p.send();
  t.like(await counts(registry), { pushed: 0, send_error: 2 });
  t.is(lines.length, 1);
  t.like(lines[0], { level: 40, records: 2, controlPlane: url, msg: "decision samples not sent; dropped (meshext_decision_log_push_dropped_total)" });
  t.regex(String(lines[0]!.err), /connection refused/);
});

test("pusher › given failing pushes, then one warning a minute at most, with the status, the answer's first 500 characters and the count", async (t) => {
  const cp = await standIn(t, () => ({ status: 400, body: "x".repeat(600) }));
  const { log, lines } = capturedLog();
  let now = 1_000_000;
  const { p } = pusher(cp.url, { log, nowMs: () => now });
  const failOnce = async () => {
    offer(p, rec(0));
    await p.send();
  };
  // When pushes fail at 0 s, 59.999 s and 60 s after the first
  await failOnce();
  now += 59_999;
  await failOnce();
  now += 1;
  await failOnce();
  // Then the first and the one a full minute after it warn; the one in between is silent
  t.is(lines.length, 2);
  t.like(lines[0], { level: 40, status: 400, records: 1, controlPlane: cp.url, msg: "decision samples refused by the control plane; dropped (meshext_decision_log_push_dropped_total)" });
  t.is(lines[0]!.answer, "x".repeat(500));
});

test("pusher › given a started pusher, when its interval passes, then the sample is sent without anyone calling send", async (t) => {
  const cp = await standIn(t);
  const { p } = pusher(cp.url, { intervalMs: 50 });
  p.start();
  t.teardown(() => p.stop());
  offer(p, rec(0));
  const deadline = Date.now() + 5000;
  while (cp.received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.deepEqual(sentRecords(cp.received), [0]);
});

test("pusher › given a started pusher, when two intervals pass with a record each, then each interval's record goes in its own POST", async (t) => {
  const cp = await standIn(t);
  const { p } = pusher(cp.url, { intervalMs: 50 });
  p.start();
  t.teardown(() => p.stop());
  offer(p, rec(0));
  const deadline = Date.now() + 5000;
  while (cp.received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  offer(p, rec(1));
  while (cp.received.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.deepEqual(cp.received.map((r) => sentRecords([r])), [[0], [1]]);
});

test("pusher › given only records too large for a body, when the sample is sent, then no POST is made at all", async (t) => {
  const cp = await standIn(t);
  const { p, registry } = pusher(cp.url, { batchBytes: 20 });
  offer(p, rec("too large for twenty bytes"));
  await p.send();
  t.is(cp.received.length, 0);
  t.like(await counts(registry), { pushed: 0, too_large: 1 });
});

test("pusher › given a send still in flight, when more intervals pass, then no second send starts; stop waits for the one in flight", async (t) => {
  // Given a control plane that holds its first answer until released
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const cp = await standIn(t, () => held);
  const { p, registry } = pusher(cp.url, { intervalMs: 50 });
  p.start();
  offer(p, rec(0));
  // When several intervals pass while it is held, with a new record each
  for (let i = 1; i <= 4; i++) {
    await new Promise((r) => setTimeout(r, 60));
    offer(p, rec(i));
  }
  // Then only one POST arrived
  t.is(cp.received.length, 1);
  // And stop() resolves only after it was answered (its record counted)
  setTimeout(release, 100);
  await p.stop();
  t.like(await counts(registry), { pushed: 1 });
  // and no timer fires after stop: the records offered meanwhile are never sent
  await new Promise((r) => setTimeout(r, 150));
  t.is(cp.received.length, 1);
});
