// The control plane's HTTP server in process: its URL, defaults and options, reply headers, the 500 for a failed write (logged), one debug line per request, decision samples let go with their Dataplane, and stop().
import test from "ava";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:net";
import { Writable } from "node:stream";
import { createLogger } from "../../extproc/log.js";
import { DEFAULT_OFFLINE_GC_AGE_MS, DEFAULT_OFFLINE_TIMEOUT_MS, startControlPlane } from "../../extproc/control-plane/server.js";
import { pollUntil } from "../helpers/poll-until.js";
import { call, controlPlaneFor, dataplane, mtp, startTestControlPlane, tempDir } from "./helpers.js";
import { CONTROL_PLANE_FLAGS } from "../../extproc/config/control-plane.js";

/** The ring of decision samples each Dataplane keeps when the control plane is started without options. */
const DEFAULT_SAMPLES_PER_DATAPLANE = CONTROL_PLANE_FLAGS.find((f) => f.key === "decisionSamplesPerDataplane")!.default as number;

/** A debug-level logger whose JSON lines are kept in `lines`. */
function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split("\n")) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: createLogger("debug", stream), lines };
}

/** startControlPlane on 127.0.0.1:0 with a captured logger; stopped and removed when the test ends. */
async function loggedControlPlane(t: { teardown(fn: () => Promise<void>): void }) {
  const dir = await tempDir();
  const { log, lines } = capturedLogger();
  const cp = await startControlPlane({ listen: "127.0.0.1:0", dataDir: dir.path }, log);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  return { cp, dir, lines };
}

const record = (id: string) => ({ requestId: id, direction: "inbound", method: "GET", path: "/", authority: "backend", outcome: "allow", kind: "MeshTrafficPermission" });
const pushSamples = (url: string, name: string, n: number) =>
  call(url, "POST", `/meshes/default/dataplanes/${name}/_decision-samples`, { records: Array.from({ length: n }, (_, i) => record(`r${i}`)) });
const heldSamples = async (url: string) => {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^meshext_control_plane_decision_samples (\S+)$/m.exec(text)?.[1]);
};

test("server › given listen 127.0.0.1:0, when started, then its url is http://127.0.0.1:<the port it got>", async (t) => {
  const { cp } = await controlPlaneFor(t);
  t.is(cp.address.address, "127.0.0.1");
  t.true(cp.address.port > 0);
  t.is(cp.url, `http://127.0.0.1:${cp.address.port}`);
  t.is((await fetch(cp.url + "/")).status, 200);
});

test("server › given listen [::1]:0, when started, then its url puts the IPv6 address in brackets", async (t) => {
  const { cp } = await controlPlaneFor(t, { listen: "[::1]:0" });
  t.is(cp.address.family, "IPv6");
  t.is(cp.url, `http://[::1]:${cp.address.port}`);
  t.is((await fetch(cp.url + "/")).status, 200);
});

test("server › given a port already taken, when a second control plane listens on it, then start fails with EADDRINUSE", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  await t.throwsAsync(startTestControlPlane(dir.path, { listen: `127.0.0.1:${cp.address.port}` }), { code: "EADDRINUSE" });
});

test("server › given no options, then GET / reports meshext 0.1.0 based on Kuma 2.14, and the offline defaults are 30 s and 72 h", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const index = await call(cp.url, "GET", "/");
  t.is(index.body.version, "0.1.0");
  t.regex(index.body.basedOnKuma, /^2\.14\./);
  t.is(DEFAULT_OFFLINE_TIMEOUT_MS, 30_000);
  t.is(DEFAULT_OFFLINE_GC_AGE_MS, 72 * 3_600_000);
  const { cp: other } = await controlPlaneFor(t, { version: "9.9.9", kumaVersion: "3.0" });
  const otherIndex = await call(other.url, "GET", "/");
  t.is(otherIndex.body.version, "9.9.9");
  t.regex(otherIndex.body.basedOnKuma, /^3\.0/);
});

test("server › given no decision-sample options, when a push holds 1001 records, then 413 at the flag's default of 1000; an option of 2 refuses 3", async (t) => {
  const { cp } = await controlPlaneFor(t);
  t.is((await call(cp.url, "PUT", "/meshes/default/dataplanes/backend-1", dataplane("backend-1"))).status, 201);
  const over = await pushSamples(cp.url, "backend-1", 1001);
  t.is(over.status, 413);
  t.regex(over.body.detail, /at most 1000 \(--decision-samples-per-dataplane\)/);
  t.deepEqual((await pushSamples(cp.url, "backend-1", 1000)).body, { accepted: 1000, held: 1000 });
  const { cp: small } = await controlPlaneFor(t, { decisionSamples: { perDataplane: 2 } });
  t.is((await call(small.url, "PUT", "/meshes/default/dataplanes/backend-1", dataplane("backend-1"))).status, 201);
  t.regex((await pushSamples(small.url, "backend-1", 3)).body.detail, /at most 2 \(/);
  t.deepEqual((await pushSamples(small.url, "backend-1", 2)).body, { accepted: 2, held: 2 });
});

test("server › given a body limit option, when a larger body arrives, then 413 with connection: close; other refusals keep the connection", async (t) => {
  const { cp } = await controlPlaneFor(t, { limits: { maxBodyBytes: 100 } });
  const big = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", { ...mtp("p"), labels: { note: "x".repeat(200) } });
  t.is(big.status, 413);
  t.is(big.headers.get("connection"), "close");
  const bad = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", "{not json");
  t.is(bad.status, 400);
  t.is(bad.headers.get("connection"), "keep-alive");
  t.is(bad.headers.get("keep-alive"), "timeout=5");
});

test("server › given a reply with no body (304), then it carries no content-type; replies with a body are application/json", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const list = await fetch(`${cp.url}/meshes/default/meshtrafficpermissions`);
  t.is(list.headers.get("content-type"), "application/json");
  const etag = list.headers.get("etag")!;
  const same = await fetch(`${cp.url}/meshes/default/meshtrafficpermissions`, { headers: { "if-none-match": etag } });
  t.is(same.status, 304);
  t.is(same.headers.get("content-type"), null);
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions/none")).headers.get("content-type"), "application/json");
});

test("server › given a reply with a JSON body, then it is the body pretty-printed with a final newline", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const text = await (await fetch(`${cp.url}/meshes/default/meshtrafficpermissions/none`)).text();
  t.is(text, JSON.stringify(JSON.parse(text), null, 2) + "\n");
});

test("server › given a write the store refuses for lack of space (ENOSPC, EDQUOT), then 507 Insufficient Storage naming the error; any other error is a 500", async (t) => {
  // Given a control plane whose store fails every write with the given error code
  const { cp } = await controlPlaneFor(t);
  const failingWith = (code: string, message: string) => {
    cp.store.put = () => Promise.reject(Object.assign(new Error(message), { code }));
  };
  for (const [code, message] of [["ENOSPC", "ENOSPC: no space left on device, write"], ["EDQUOT", "EDQUOT: disk quota exceeded, write"]]) {
    failingWith(code!, message!);
    // When a policy is PUT
    const reply = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", mtp("p"));
    // Then 507, the title and detail saying the data directory is full and why
    t.is(reply.status, 507, code);
    t.like(reply.body, { status: 507, title: "Insufficient Storage", detail: `the control plane's data directory is full: ${message}` }, code);
  }
  failingWith("EIO", "EIO: i/o error, write");
  t.like((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/p", mtp("p"))).body, { status: 500, title: "Internal Server Error", detail: "EIO: i/o error, write" });
});

test("server › given a held long-poll, when its client goes away, then it is no longer held, long before its wait ends", async (t) => {
  // Given a long-poll of a minute held on the policy list
  const { cp } = await controlPlaneFor(t);
  const waiters = async () => Number(/^meshext_control_plane_long_poll_waiters\{collection_kind="MeshTrafficPermission"\} (\S+)$/m.exec(await (await fetch(`${cp.url}/metrics`)).text())?.[1]);
  const etag = (await fetch(`${cp.url}/meshes/default/meshtrafficpermissions`)).headers.get("etag")!;
  const client = new AbortController();
  const held = fetch(`${cp.url}/meshes/default/meshtrafficpermissions?wait=60s`, { headers: { "if-none-match": etag }, signal: client.signal }).then(
    () => "answered",
    () => "aborted",
  );
  await pollUntil("the long-poll held", waiters, (n) => n === 1, 10_000);
  // When the client aborts it
  client.abort();
  t.is(await held, "aborted");
  // Then the control plane lets it go within seconds, not at the end of the minute
  t.is(await pollUntil("the abandoned long-poll let go", waiters, (n) => n === 0, 10_000), 0);
});

test("server › given /metrics/ with a trailing slash, then it is the metrics endpoint; a path that only starts with /metrics is not", async (t) => {
  const { cp } = await controlPlaneFor(t);
  const res = await fetch(`${cp.url}/metrics/`);
  t.is(res.status, 200);
  t.regex(res.headers.get("content-type") ?? "", /^text\/plain/);
  t.regex(await res.text(), /^# HELP meshext_control_plane_/m);
  const post = await fetch(`${cp.url}/metrics//`, { method: "POST" });
  t.is(post.status, 405);
  t.is(post.headers.get("allow"), "GET");
  t.is((await fetch(`${cp.url}/metricsx`)).status, 404);
});

test("server › given a write the store cannot finish (a directory where its file goes), then 500 with the error, logged as a failed request", async (t) => {
  const { cp, dir, lines } = await loggedControlPlane(t);
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/a", mtp("a"))).status, 201);
  mkdirSync(`${dir.path}/meshes/default/meshtrafficpermissions/b.yaml`);
  const failed = await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/b", mtp("b"));
  t.is(failed.status, 500);
  t.is(failed.headers.get("content-type"), "application/json");
  t.is(failed.body.title, "Internal Server Error");
  t.regex(failed.body.detail, /^EISDIR: /);
  const logged = lines.filter((l) => l.msg === "control-plane request failed");
  t.is(logged.length, 1);
  t.is(logged[0]!.level, 50);
  t.is(logged[0]!.method, "PUT");
  t.is(logged[0]!.path, "/meshes/default/meshtrafficpermissions/b");
  t.regex(JSON.stringify(logged[0]!.err), /EISDIR/);
});

test("server › given requests answered, then each is logged at debug with its method, path and status", async (t) => {
  const { cp, lines } = await loggedControlPlane(t);
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/a", mtp("a"))).status, 201);
  t.is((await call(cp.url, "GET", "/meshes/default/meshtrafficpermissions/none")).status, 404);
  const logged = lines.filter((l) => l.msg === "control-plane request").map((l) => [l.level, l.method, l.path, l.status]);
  t.deepEqual(logged, [
    [20, "PUT", "/meshes/default/meshtrafficpermissions/a", 201],
    [20, "GET", "/meshes/default/meshtrafficpermissions/none", 404],
  ]);
});

test("server › given held decision samples, when their Dataplane is deleted, then they go; a policy of that name deleted or the Dataplane rewritten keeps them", async (t) => {
  const { cp } = await controlPlaneFor(t);
  t.is((await call(cp.url, "PUT", "/meshes/default/dataplanes/backend-1", dataplane("backend-1"))).status, 201);
  t.is((await call(cp.url, "PUT", "/meshes/default/meshtrafficpermissions/backend-1", mtp("backend-1"))).status, 201);
  t.is((await pushSamples(cp.url, "backend-1", 3)).status, 200);
  t.is((await call(cp.url, "DELETE", "/meshes/default/meshtrafficpermissions/backend-1")).status, 200);
  t.is((await call(cp.url, "PUT", "/meshes/default/dataplanes/backend-1", dataplane("backend-1", "backend-v2"))).status, 200);
  t.is(await heldSamples(cp.url), 3);
  t.is((await call(cp.url, "DELETE", "/meshes/default/dataplanes/backend-1")).status, 200);
  t.is(await heldSamples(cp.url), 0);
});

test("server › given a held long-poll and a request whose body never finishes, when stopped, then the long-poll is answered and stop returns", async (t) => {
  const dir = await tempDir();
  t.teardown(() => dir.remove());
  const cp = await startTestControlPlane(dir.path);
  const list = await fetch(`${cp.url}/meshes/default/meshtrafficpermissions`);
  const held = fetch(`${cp.url}/meshes/default/meshtrafficpermissions?wait=60s`, { headers: { "if-none-match": list.headers.get("etag")! } });
  const socket = connect(cp.address.port, "127.0.0.1");
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.on("error", () => {});
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  // Expect: 100-continue: the server's "100 Continue" says the request is in (the connection is no longer idle)
  const continued = new Promise<void>((resolve) => socket.once("data", () => resolve()));
  socket.write("PUT /meshes/default/meshtrafficpermissions/p HTTP/1.1\r\nhost: cp\r\ncontent-type: application/json\r\ncontent-length: 1000\r\nexpect: 100-continue\r\n\r\n");
  await continued;
  socket.write("{");
  await cp.stop();
  t.is((await held).status, 304);
  await closed;
  t.pass();
});

test("server › given a control plane started on a stored Dataplane without decision-sample options, when a push holds one record more than the flag's default, then 413 before any record is read", async (t) => {
  // Given a data dir already holding Dataplane backend-1 (written as the store writes it: no PUT, no fsync), and a
  // control plane started on it with no decision-sample options
  const dir = await tempDir();
  const dataplanes = join(dir.path, "meshes", "default", "dataplanes");
  mkdirSync(dataplanes, { recursive: true });
  const seen = new Date().toISOString();
  writeFileSync(join(dataplanes, "backend-1.yaml"), `type: Dataplane\nmesh: default\nname: backend-1\nstatus:\n  state: offline\n  lastSeenTime: ${seen}\n`);
  const cp = await startTestControlPlane(dir.path);
  t.teardown(async () => {
    await cp.stop();
    await dir.remove();
  });
  // When it is pushed one placeholder record more than the default ring holds (the count is checked before any record is)
  const over = await call(cp.url, "POST", "/meshes/default/dataplanes/backend-1/_decision-samples", { records: new Array(DEFAULT_SAMPLES_PER_DATAPLANE + 1).fill(0) });
  // Then 413 at the flag's default, not a 400 for the records
  t.is(over.status, 413);
  t.regex(over.body.detail, new RegExp(`^${DEFAULT_SAMPLES_PER_DATAPLANE + 1} records in one push; at most ${DEFAULT_SAMPLES_PER_DATAPLANE} \\(`));
});
