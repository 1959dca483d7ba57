// Scaling down under load with real parts, the way Kuma's e2e "should not drop a request when scaling up and
// down" does (a request every 50 ms per connection, retries off, any non-200 fails; only an HTTP/2 REFUSED_STREAM,
// which says the request was never processed, is sent again, as Go's HTTP/2 client does): two `meshext run`
// instances (real Envoy on the generated bootstrap: Lua shim, wasm drain filter, ext_proc) in a real embedded
// control plane, a client following its endpoints over HTTP/1.1 keep-alive, one HTTP/2 connection and 2 s
// requests; one instance leaves by the classic or the native-sidecar sequence, or is hurried by a second and third
// SIGTERM.
import test, { type ExecutionContext } from "ava";
import { eventually } from "../control-plane/helpers.js";
import { requireEnvoy } from "../helpers/real-envoy.js";
import { runScaleDown, type ScaleDownResult } from "../helpers/scale-down.js";
import { startInstance } from "../helpers/mesh-instance.js";
import { controlPlaneFor } from "../control-plane/helpers.js";
import { firstStatus } from "../helpers/mesh-instance.js";

const DRAIN_MIN_MS = 3000;
const DRAIN_TIME_MS = 20_000;
/**
 * /ready must fail this soon after the signal (measured: signal sent → first 503 seen by a back-to-back poll).
 * The drain's first step fails Envoy's health check; a quiet machine shows it well inside 100 ms (the bound until now). This bound leaves
 * room for a machine with both cores loaded (312 ms seen with a mutation run and the suite side by side) and
 * is still half the drain filter's 1 s poll of GET /drain and a sixth of the minimum drain time (3 s here): a /ready
 * that waited for a poll, or for the drain's wait, fails it.
 */
const READY_FAILS_WITHIN_MS = 500;

function describe(r: ScaleDownResult): string {
  const byKind = new Map<string, number>();
  for (const q of r.requests) byKind.set(q.kind, (byKind.get(q.kind) ?? 0) + 1);
  const failed = r.failedRequests.slice(0, 5).map((q) => `${q.kind}#${q.slot}@${q.instance} +${q.startMs - r.signalAtMs}ms: ${q.status ?? ""} ${q.error ?? ""}`);
  const retried = r.requests.filter((q) => q.refusedOnConn !== undefined).length;
  return `${r.requests.length} requests (${[...byKind].map(([k, n]) => `${k} ${n}`).join(", ")}), ${r.failedRequests.length} failed ${failed.join("; ")}; ${retried} HTTP/2 retried after REFUSED_STREAM; /ready 503 after ${r.readyFailedAfterMs}ms; exit ${r.exit.code} after ${r.exit.afterMs}ms; unlisted after ${r.unlistedAfterMs}ms`;
}

/** What every scale-down must show, whatever the sequence. */
function assertNothingDropped(t: ExecutionContext, r: ScaleDownResult, filterMark = true) {
  t.log(describe(r));
  // 0 failed requests of all sent, and traffic really ran on both sides of the signal
  t.is(r.failedRequests.length, 0, describe(r));
  const toLeaving = r.requests.filter((q) => q.instance === r.leavingName);
  t.true(toLeaving.some((q) => q.startMs < r.signalAtMs && q.endMs > r.signalAtMs && q.kind.endsWith("long")), "2 s requests were in flight to the leaving instance at the signal");
  t.true(toLeaving.some((q) => q.startMs >= r.signalAtMs), "requests kept reaching the leaving instance after the signal (before clients saw it leave)");
  // The drain filter saw the drain (it polls the sidecar's GET /drain every second) and marked responses with its
  // header. Not asserted where clients may all have left before its next poll (native: the hook's own start-up).
  if (filterMark) {
    const late = toLeaving.filter((q) => q.endMs - r.signalAtMs >= 1500);
    // Only when such late responses exist (the 2 s requests' timing decides): not every run has one.
    t.log(`${late.length} responses from the leaving instance ended 1.5 s or more after the signal`);
    t.true(late.every((q) => q.drainingHeader === "true"), `the drain filter marked every response of the leaving instance 1.5 s after the signal x-meshext-draining (${late.length} such responses)`);
  }
  // Every HTTP/1.1 connection to the leaving instance ended with a `connection: close` response from the draining
  // Envoy, and its client reconnected to the staying instance.
  const h1 = r.connections.filter((c) => c.instance === r.leavingName && c.kind !== "h2");
  t.true(h1.length >= 4, `${h1.length} HTTP/1.1 connections to the leaving instance`);
  for (const c of h1) {
    const onIt = r.requests.filter((q) => q.conn === c.id).sort((a, b) => a.endMs - b.endMs);
    const last = onIt[onIt.length - 1]!;
    t.is(last.connectionHeader, "close", `connection ${c.id} (${c.kind} slot ${c.slot}): its last response closed it`);
    const after = r.connections.find((d) => d.kind === c.kind && d.slot === c.slot && d.openedMs >= (c.closedMs ?? Infinity) && d.instance === r.stayingName);
    t.truthy(after && r.requests.some((q) => q.conn === after.id && q.status === 200), `connection ${c.id}: its client reconnected to ${r.stayingName}`);
  }
  // The HTTP/2 connection got GOAWAY, the graceful one first (last stream 2^31-1: Envoy refuses nothing it was
  // sent), no stream on it was reset, and a new one served from the staying instance. A request the client
  // submitted but had not sent when that GOAWAY arrived is refused by node:http2 itself (REFUSED_STREAM, never
  // sent) and retried by the load on a new connection: test/envoy-real/h2-drain.test.ts.
  const h2 = r.connections.filter((c) => c.instance === r.leavingName && c.kind === "h2");
  t.true(h2.length >= 1, "the HTTP/2 connection went to the leaving instance");
  for (const c of h2) {
    t.true(c.goaways.length >= 1, `HTTP/2 connection ${c.id} got GOAWAY`);
    t.is(c.goaways[0]?.lastStreamId, 2 ** 31 - 1, `HTTP/2 connection ${c.id}: the first GOAWAY is graceful (${JSON.stringify(c.goaways)})`);
    t.is(c.resetStreams, 0, `HTTP/2 connection ${c.id}: no stream reset`);
  }
  t.true(r.connections.some((c) => c.kind === "h2" && c.instance === r.stayingName && r.requests.some((q) => q.conn === c.id && q.status === 200)), "HTTP/2 reconnected to the staying instance");
}

function assertReadyFailedAtOnce(t: ExecutionContext, r: ScaleDownResult, fromMs: number) {
  t.not(r.readyFailedAfterMs, undefined, "the leaving Envoy's /ready answered 503");
  t.true(r.readyFailedAfterMs! - fromMs <= READY_FAILS_WITHIN_MS, `Envoy's /ready answered 503 ${r.readyFailedAfterMs! - fromMs}ms after the signal (bound ${READY_FAILS_WITHIN_MS}ms)`);
}

const wait = (r: ScaleDownResult) => r.lines.find((l) => l.component === "drain" && l.step === "wait");

test.serial("scale-down › classic: SIGTERM mid-load drops nothing; Envoy's /ready fails at once; exit 0 once idle after the minimum", async (t) => {
  t.timeout(60_000);
  const envoy = requireEnvoy(t);
  if (!envoy) return;
  const r = await runScaleDown({ envoy, sequence: "classic", drainMinMs: DRAIN_MIN_MS, drainTimeMs: DRAIN_TIME_MS, log: (m) => t.log(m) });
  assertNothingDropped(t, r);
  assertReadyFailedAtOnce(t, r, 0);
  // Then it left with status 0 after the minimum, as soon as nothing was in flight, well inside the drain time
  t.is(r.exit.code, 0, r.output.slice(-2000));
  t.true(r.exit.afterMs >= DRAIN_MIN_MS, `exited ${r.exit.afterMs}ms after the signal: not before --drain-min`);
  t.true(r.exit.afterMs < DRAIN_TIME_MS / 2, `exited ${r.exit.afterMs}ms after the signal: well inside --drain-time ${DRAIN_TIME_MS}ms`);
  t.like(wait(r), { reason: "no requests in flight" });
  t.truthy(r.lines.find((l) => l.step === "control_plane_deregister" && l.outcome === "ok"), "deregistered");
});

test.serial("scale-down › native: drain --forever from preStop, then SIGTERM (--exit-on-sigterm) once the app is done: nothing dropped, exit 0 at once", async (t) => {
  t.timeout(60_000);
  const envoy = requireEnvoy(t);
  if (!envoy) return;
  const r = await runScaleDown({ envoy, sequence: "native", drainMinMs: DRAIN_MIN_MS, drainTimeMs: DRAIN_TIME_MS, log: (m) => t.log(m) });
  t.log(`meshext drain --forever exited ${r.drainCommandExitedAfterMs}ms after it was started; SIGTERM sent after ${r.sigtermAfterMs}ms`);
  assertNothingDropped(t, r, false);
  // /ready is measured from the hook's answer (the command's own start-up is node's, not the drain's)
  assertReadyFailedAtOnce(t, r, r.drainCommandExitedAfterMs!);
  // Then the SIGTERM that follows the app's exit ends it at once, with status 0 and no second drain wait
  t.is(r.exit.code, 0, r.output.slice(-2000));
  t.true(r.exit.afterMs - r.sigtermAfterMs! < 3000, `exited ${r.exit.afterMs - r.sigtermAfterMs!}ms after the SIGTERM`);
  t.truthy(r.lines.find((l) => l.component === "drain" && /forever/.test(JSON.stringify(l))), "drained forever");
  t.falsy(r.lines.find((l) => l.step === "wait" && l.reason === "no requests in flight"), "no timed wait after the SIGTERM");
  t.truthy(r.lines.find((l) => l.step === "control_plane_deregister" && l.outcome === "ok"), "deregistered");
});

test.serial("scale-down › a second SIGTERM cuts the drain short: exit 0 long before --drain-min, nothing dropped", async (t) => {
  t.timeout(60_000);
  const envoy = requireEnvoy(t);
  if (!envoy) return;
  const drainMinMs = 15_000;
  const r = await runScaleDown({ envoy, sequence: "second-sigterm", drainMinMs, drainTimeMs: DRAIN_TIME_MS, log: (m) => t.log(m) });
  assertNothingDropped(t, r);
  assertReadyFailedAtOnce(t, r, 0);
  t.is(r.exit.code, 0, r.output.slice(-2000));
  t.true(r.exit.afterMs - r.sigtermAfterMs! < 3000, `exited ${r.exit.afterMs - r.sigtermAfterMs!}ms after the second SIGTERM`);
  t.true(r.exit.afterMs < drainMinMs, `exited ${r.exit.afterMs}ms after the first: before --drain-min ${drainMinMs}ms`);
  t.like(wait(r), { reason: "signal" });
});

test.serial("scale-down › a third SIGTERM exits at once with status 1 and kills an Envoy stuck in its exit", async (t) => {
  t.timeout(60_000);
  const envoy = requireEnvoy(t);
  if (!envoy) return;
  // Given one meshext instance whose Envoy will hang on exit (stopped), with 30 s for Envoy to exit
  const { cp } = await controlPlaneFor(t);
  const i = await startInstance({ name: "backend-a", controlPlane: cp.url, envoy, kind: "meshext", drainMinMs: 15_000, drainTimeMs: DRAIN_TIME_MS, envoyKillGraceMs: 30_000 });
  t.teardown(() => i.stop());
  await i.ready;
  const envoyPid = i.envoyPid()!;
  t.truthy(envoyPid, "Envoy's pid was logged");
  // When the first SIGTERM starts the drain, Envoy stops responding, and a second SIGTERM hurries the exit
  const ready = firstStatus(`${i.envoyAdminUrl}/ready`, 503);
  i.process.kill("SIGTERM");
  t.truthy(await ready.at);
  process.kill(envoyPid, "SIGSTOP");
  i.process.kill("SIGTERM");
  t.true(await eventually(() => i.lines().some((l) => l.count === 2), 5000, 10), i.output());
  t.true(await eventually(() => i.lines().some((l) => l.step === "control_plane_deregister"), 5000, 10), "the exit steps reached Envoy's stop");
  // Then a third exits at once with status 1, and Envoy is not left behind
  const thirdAt = Date.now();
  i.process.kill("SIGTERM");
  const exit = await i.exited;
  t.is(exit.code, 1, i.output().slice(-2000));
  t.true(exit.atMs - thirdAt < 1500, `exited ${exit.atMs - thirdAt}ms after the third SIGTERM`);
  t.true(await eventually(() => gone(envoyPid), 3000, 20), "Envoy was killed");
});

function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}
